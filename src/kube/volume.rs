//! Where the shards write their runs: a ReadWriteMany claim every pod mounts (and the merge
//! Job reads), or an `emptyDir` of each pod's own that `kubectl cp` copies out.

use super::naming::Naming;
use super::objects::{
    ClaimVolume, EmptyDir, PersistentVolumeClaim, PvcSpec, Volume, VolumeMount, VolumeResources,
};
use super::Collect;

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
        Collect::Copy => Runs {
            claim: None,
            volume: Volume {
                empty_dir: Some(EmptyDir {}),
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
