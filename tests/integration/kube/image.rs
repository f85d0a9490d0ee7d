//! The repository's Dockerfile, built and run for real with podman (tests/run installs it):
//! the image from this test's binary (its `prebuilt` stage: no registry is reachable here),
//! run as the pods run it (user 65532, read-only root, no capabilities, no privilege
//! escalation, the runs on a mounted volume) doing a short attack on an nginx on this
//! machine's loopback (the container on the host's network), and the run it wrote read back.

use crate::support::certs;
use crate::support::nginx::{Nginx, Tls};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// podman as the tests run it. Its default runtime (crun) cannot start a container in this
/// machine's hybrid cgroup layout, runc can; the limits a container gets must be within this
/// process's own (it has no CAP_SYS_RESOURCE to raise them), so they are given.
fn podman() -> Command {
    let mut c = Command::new("podman");
    c.args(["--runtime", "runc"]);
    c
}

fn run_ok(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: podman cannot run ({e}): tests/run installs it"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The image, removed when the test ends however it ends.
struct Image(String);

impl Drop for Image {
    fn drop(&mut self) {
        let _ = podman()
            .args(["rmi", "--force", &self.0])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// This process's hard limit of open files (`Max open files` in /proc/self/limits).
fn open_files_limit() -> u64 {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("a limit of open files");
    line.split_whitespace().nth(4).unwrap().parse().unwrap()
}

#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs podman, runc and nginx: run tests/run"
)]
fn the_image_builds_and_runs_an_attack_as_the_pods_would() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = certs::make(tmp.path());
    let nginx = Nginx::start(Tls::Server(&certs));

    // The build context: the Dockerfile and the root file system image/rootfs.sh lays out
    // from this test's binary, with the test CA added to the CA bundle so that the run in
    // the container trusts nginx through the image's bundle, as it would a public CA's.
    let context = tmp.path().join("context");
    std::fs::create_dir_all(&context).unwrap();
    for f in ["Dockerfile", ".dockerignore"] {
        std::fs::copy(f, context.join(f)).unwrap();
    }
    let mut bundle = std::fs::read("/etc/ssl/certs/ca-certificates.crt")
        .expect("the CA bundle (apt-get install ca-certificates)");
    bundle.extend(std::fs::read(&certs.ca).unwrap());
    let bundle_path = tmp.path().join("bundle.pem");
    std::fs::write(&bundle_path, bundle).unwrap();
    run_ok(
        Command::new("image/rootfs.sh")
            .arg(env!("CARGO_BIN_EXE_headroom"))
            .arg(context.join("target/image-rootfs"))
            .env("CA_BUNDLE", &bundle_path),
        "image/rootfs.sh",
    );
    let image = Image(format!("localhost/headroom-test:{}", std::process::id()));
    run_ok(
        podman()
            // No intermediate images left behind: only the tagged one, removed at the end.
            .args([
                "build",
                "--layers=false",
                "--build-arg",
                "ROOTFS=prebuilt",
                "-t",
                &image.0,
            ])
            .arg(&context),
        "podman build",
    );

    // The runs volume, writable by the image's user and no one else.
    let runs = tmp.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    run_ok(
        Command::new("chown").args(["65532:65532", runs.to_str().unwrap()]),
        "chown",
    );
    let url = format!("https://127.0.0.1:{}/", nginx.port);
    let mut child = contained(&runs, "headroom", &image)
        // The pods' `command: [headroom]`, found on the image's PATH.
        .args([
            "attack",
            &url,
            "--rate",
            "100",
            "-n",
            "200",
            "--out",
            "/runs/run",
        ])
        .args(["--quiet", "--format", "json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("podman runs (tests/run installs it)");
    // Two seconds of sending; the bound only keeps a broken container from hanging the suite.
    let deadline = Instant::now() + Duration::from_secs(180);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the container did not end within 180 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the container's attack: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // The run it wrote, read here: every request answered over TLS, the CA found in the
    // image's bundle (no --cacert was given).
    let run = runs.join("run");
    let report = crate::support::headroom(&["report", run.to_str().unwrap(), "--format", "json"]);
    assert!(report.status.success());
    let summary: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(summary["requests"]["total"], 200, "{summary}");
    assert_eq!(summary["status_codes"]["200"], 200, "{summary}");
    assert_eq!(summary["success_ratio"], 1.0, "{summary}");
    // Written by the image's user, not root.
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(run.join("meta.json")).unwrap().uid(),
        65532
    );

    // Nothing but headroom in it: no shell to run (the same container runs headroom).
    let shell = contained(&runs, "sh", &image)
        .args(["-c", "true"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&shell.stderr);
    assert!(!shell.status.success(), "the image has a shell");
    assert!(
        stderr.contains("\"sh\": executable file not found"),
        "{stderr}"
    );
    let version = contained(&runs, "headroom", &image)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        version.status.success(),
        "{}",
        String::from_utf8_lossy(&version.stderr)
    );
}

/// `podman run` of `entrypoint` in `image` as a pod runs it: the host's network, user
/// 65532, a read-only root with a /tmp of its own, no capabilities, no privilege escalation,
/// `runs` as its /runs volume; its arguments follow.
fn contained(runs: &Path, entrypoint: &str, image: &Image) -> Command {
    let nofile = open_files_limit().min(65536);
    let mut c = podman();
    c.args(["run", "--rm", "--network", "host"])
        .args(["--ulimit", &format!("nofile={nofile}:{nofile}")])
        .args(["--ulimit", "nproc=4096:4096"])
        .args(["--user", "65532:65532", "--read-only", "--cap-drop", "ALL"])
        .args(["--security-opt", "no-new-privileges", "--tmpfs", "/tmp"])
        .args(["-v", &format!("{}:/runs", runs.display())])
        .args(["--entrypoint", entrypoint, &image.0]);
    c
}
