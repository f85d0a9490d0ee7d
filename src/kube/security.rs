//! What every pod and container of a test runs under: Pod Security's "restricted" profile
//! (a non-root user by number, no privilege escalation, no capabilities, the runtime's
//! seccomp filter, a read-only root file system), and the scratch directory a read-only
//! root leaves writable.

use super::objects::{
    Capabilities, EmptyDir, PodSecurityContext, SeccompProfile, SecurityContext, Volume,
    VolumeMount,
};
use super::volume::{mount, volume};

/// The user and group every container runs as: the `nonroot` user of distroless images
/// and of headroom's Dockerfile (above 10,000, so no user of the node has it).
pub const USER: u32 = 65532;
/// Where the read-only root's one writable scratch directory is mounted.
pub const TMP_DIR: &str = "/tmp";
/// Most the scratch directory holds: headroom writes nothing there itself, but a library
/// asking for a temporary file finds a directory rather than an error.
pub const TMP_SIZE: &str = "64Mi";

/// When the kubelet pulls an image: as each pod starts, so that the registry's credentials
/// (`--image-pull-secret`) are checked for every pod and a tag moved since is not run from a
/// node's old copy; the layers a node already has are not fetched again.
pub const PULL_POLICY: &str = "Always";
/// A container's ephemeral storage besides the runs, in MiB: the scratch directory
/// ([`TMP_SIZE`]) and its logs (which the kubelet rotates at 10 MiB, keeping 5, by default).
pub const SCRATCH_MIB: u64 = 128;

fn seccomp() -> SeccompProfile {
    SeccompProfile {
        kind: "RuntimeDefault".into(),
    }
}

/// The pod's: who its processes are, and the group its volumes' files belong to.
pub(super) fn pod() -> PodSecurityContext {
    PodSecurityContext {
        run_as_non_root: true,
        run_as_user: USER,
        run_as_group: USER,
        // The kubelet gives the volumes' files this group, so the user reads the files
        // and secret keys (mode 0440) and writes the runs.
        fs_group: USER,
        seccomp_profile: seccomp(),
    }
}

/// A container's: the pod's user again (a reader of one container sees it), no way to
/// more privileges, nothing written outside its volumes.
pub(super) fn container() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: false,
        capabilities: Capabilities {
            drop: vec!["ALL".into()],
        },
        read_only_root_filesystem: true,
        run_as_non_root: true,
        run_as_user: USER,
        run_as_group: USER,
        seccomp_profile: seccomp(),
    }
}

/// The scratch directory's volume.
pub(super) fn tmp_volume() -> Volume {
    Volume {
        empty_dir: Some(EmptyDir {
            size_limit: Some(TMP_SIZE.into()),
        }),
        ..volume("tmp")
    }
}

/// The scratch directory's mount, in every container.
pub(super) fn tmp_mount() -> VolumeMount {
    mount("tmp", TMP_DIR, false)
}
