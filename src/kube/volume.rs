//! Where the shards write their runs: a ReadWriteMany claim every pod mounts (and the merge
//! Job reads), or an `emptyDir` of each pod's own that `kubectl cp` copies out.

use super::naming::Naming;
use super::objects::{
    ClaimVolume, EmptyDir, PersistentVolumeClaim, PvcSpec, Volume, VolumeMount, VolumeResources,
};
use super::{Collect, KubeError};

/// The runs volume of the pods, and the claim to apply with them when it is shared.
#[derive(Debug, Clone)]
pub(super) struct Runs {
    /// The claim `NAME-runs`, for [`Collect::Volume`].
    pub claim: Option<PersistentVolumeClaim>,
    /// The volume `runs` as the pods name it.
    pub volume: Volume,
}

/// The runs volume `collect` asks for.
pub(super) fn runs(naming: &Naming, collect: &Collect) -> Runs {
    match collect {
        Collect::Volume {
            storage_class,
            size,
        } => Runs {
            claim: Some(PersistentVolumeClaim {
                api_version: "v1".into(),
                kind: "PersistentVolumeClaim".into(),
                metadata: naming.meta("runs", "runs"),
                spec: PvcSpec {
                    // Every shard's pod mounts it at once, on whichever node.
                    access_modes: vec!["ReadWriteMany".into()],
                    storage_class_name: storage_class.clone(),
                    resources: VolumeResources {
                        requests: [("storage".to_string(), size.clone())].into(),
                    },
                },
            }),
            volume: Volume {
                persistent_volume_claim: Some(ClaimVolume {
                    claim_name: naming.object("runs"),
                }),
                ..volume("runs")
            },
        },
        Collect::Copy { size } => Runs {
            claim: None,
            volume: Volume {
                empty_dir: Some(EmptyDir {
                    size_limit: Some(size.clone()),
                }),
                ..volume("runs")
            },
        },
    }
}

/// A volume named `name` with no source yet: the caller sets the one it is.
pub(super) fn volume(name: &str) -> Volume {
    Volume {
        name: name.into(),
        config_map: None,
        secret: None,
        persistent_volume_claim: None,
        empty_dir: None,
    }
}

/// The volume `name` mounted at `path`.
pub(super) fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.into(),
        mount_path: path.into(),
        read_only,
    }
}

/// `text`, a Kubernetes quantity of bytes (`1Gi`, `500Mi`, `2G`, `1073741824`), in MiB
/// rounded up: what a runs volume of that size adds to a pod's ephemeral storage.
pub(super) fn size_mib(text: &str) -> Result<u64, KubeError> {
    let bad = || KubeError::Size(text.to_string());
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let unit: u64 = match suffix {
        "" => 1,
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        _ => return Err(bad()),
    };
    let bytes = n.checked_mul(unit).ok_or_else(bad)?;
    match bytes.div_ceil(1 << 20) {
        0 => Err(bad()),
        // A petabyte and more is no volume a pod holds: a typo.
        mib if mib > 1 << 30 => Err(bad()),
        mib => Ok(mib),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_as_kubernetes_reads_them() {
        for (text, mib) in [("1Gi", 1024), ("500Mi", 500), ("2G", 1908), ("1048577", 2)] {
            assert_eq!(size_mib(text).unwrap(), mib, "{text}");
        }
        for bad in ["", "1 Gi", "1gb", "-1Gi", "0", "1.5Gi", "99999999Ti"] {
            assert!(size_mib(bad).is_err(), "{bad}");
        }
    }
}
