//! What a user runs after `headroom kube`: the commands it prints, which docs/distributed.md
//! shows for its example (a test checks that the two agree), so there is one wording.

use super::naming::Naming;
use std::time::Duration;

/// What the commands are for.
#[derive(Debug, Clone)]
pub struct Steps<'a> {
    /// The test's name (the Job's).
    pub name: &'a str,
    /// The objects' namespace; none for kubectl's current one.
    pub namespace: Option<&'a str>,
    /// The output directory, as given.
    pub out: &'a str,
    /// How many shards.
    pub shards: u32,
    /// Whether the runs are copied out of each pod (`--collect copy`) rather than merged on a
    /// shared volume.
    pub copy: bool,
    /// How long the wait for the shards may last (volume mode): until the test's latest end.
    pub wait: Duration,
}

impl Steps<'_> {
    /// The commands, a shell script of one command a line (a loop in copy mode).
    pub fn commands(&self) -> String {
        let ns = self
            .namespace
            .map(|n| format!(" -n {n}"))
            .unwrap_or_default();
        let (name, out) = (self.name, self.out);
        let naming = Naming {
            name: name.to_string(),
            namespace: self.namespace.map(str::to_string),
        };
        let mut lines = vec![format!("kubectl apply --server-side{ns} -f {out}")];
        if !self.copy {
            // The Job ends Complete (every shard ran its part, whatever the verdict: the
            // shards are --judged-by-merge) or Failed (a shard crashed, was evicted or ran
            // out of memory); `kubectl wait` takes one condition, and waiting on Complete
            // alone would wait out its timeout after a failure, so both are polled, until
            // the test's latest end.
            let secs = self.wait.as_secs().max(60);
            lines.extend([
                format!("end=$(( $(date +%s) + {secs} ))   # the test's latest end"),
                format!("until kubectl get job{ns} {name} -o jsonpath='{{.status.conditions[?(@.status==\"True\")].type}}' \\"),
                "    | grep -qwE 'Complete|Failed' || [ \"$(date +%s)\" -ge \"$end\" ]; do sleep 10; done".into(),
                format!("kubectl get job{ns} {name}   # COMPLETIONS N/N: every shard ran its part"),
                format!("kubectl apply --server-side{ns} -f {out}/merge"),
                format!("kubectl logs{ns} -f job/{name}-merge -c report   # the verdict: the whole test's report"),
            ]);
            return script(&lines);
        }
        // The shards' Job does not complete before the runs are copied out (each pod's
        // `collect` container waits for /runs/collected), so each shard's own end is awaited:
        // its headroom container's, which ends once its run is written (end.json), or early
        // (then its run is partial or missing, and the merge names it) — not end.json alone,
        // which a shard killed or out of memory never writes.
        let shard = naming.shard_dir("$i");
        let last = self.shards.saturating_sub(1);
        lines.extend([
            format!("mkdir -p runs/{name}"),
            format!("for i in $(seq 0 {last}); do"),
            "  # Shard i is done when its headroom container has ended (its run has its end.json,".into(),
            "  # or it stopped early: its run is then partial or missing, and the merge says so).".into(),
            format!("  until pod=$(kubectl get pods{ns} -o name \\"),
            format!("          -l app.kubernetes.io/instance={name},batch.kubernetes.io/job-completion-index=$i | head -1) \\"),
            format!("      && [ -n \"$pod\" ] && [ -n \"$(kubectl get{ns} $pod \\"),
            "          -o jsonpath='{.status.containerStatuses[?(@.name==\"headroom\")].state.terminated}')\" ]; do".into(),
            "    sleep 10".into(),
            "  done".into(),
            format!("  kubectl cp{ns} -c collect ${{pod#pod/}}:{shard} runs/{name}/shard-$i"),
            format!("  kubectl exec{ns} -c collect ${{pod#pod/}} -- touch {}/collected   # the pod may end now", super::RUNS_DIR),
            "done".into(),
            format!("headroom merge runs/{name}/shard-* --out runs/{name}/merged"),
            // The whole test's verdict as the script's status: 3 when an objective was missed.
            format!("headroom report runs/{name}/merged --exit-status"),
        ]);
        script(&lines)
    }
}

fn script(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}
