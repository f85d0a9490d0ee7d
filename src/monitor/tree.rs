//! Process trees from /proc: a watched PID stands for itself and everything it started
//! (nginx's master and its workers, a service and its helpers), found again at every
//! sample so that workers started or replaced mid-run count.

use std::collections::HashMap;

/// One process as /proc/PID/stat describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Proc {
    /// Its PID.
    pub pid: u32,
    /// Its parent's PID.
    pub ppid: u32,
    /// Its command name (`comm`).
    pub name: String,
    /// User plus system CPU time, in clock ticks.
    pub ticks: u64,
    /// Threads.
    pub threads: u64,
    /// Resident memory, pages.
    pub rss_pages: u64,
}

/// Reads one /proc/PID/stat line; `None` when it is not one.
pub fn parse_stat(pid: u32, text: &str) -> Option<Proc> {
    // The command name may hold spaces and parentheses: fields count from the last ')'.
    let open = text.find('(')?;
    let (head, after) = text.rsplit_once(')')?;
    let name = head.get(open + 1..)?.to_string();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok());
    Some(Proc {
        pid,
        ppid: u32::try_from(field(1)?).ok()?,
        name,
        ticks: field(11)? + field(12)?,
        threads: field(17)?,
        rss_pages: field(21)?,
    })
}

/// Every process readable in /proc now.
pub fn scan() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            parse_stat(pid, &text)
        })
        .collect()
}

/// `root` and all its descendants among `procs` (empty when `root` is not there).
pub fn tree(root: u32, procs: &[Proc]) -> Vec<&Proc> {
    let mut children: HashMap<u32, Vec<&Proc>> = HashMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut out: Vec<&Proc> = procs.iter().filter(|p| p.pid == root).collect();
    let mut i = 0;
    while i < out.len() {
        let pid = out[i].pid;
        if let Some(kids) = children.get(&pid) {
            // A PID is its own parent only for the kernel's idle task; never loop on it.
            out.extend(kids.iter().filter(|k| k.pid != pid));
        }
        i += 1;
    }
    out
}

/// Cores online on this machine (from /proc/stat), at least 1.
pub fn cores_online() -> u32 {
    std::fs::read_to_string("/proc/stat")
        .map(|s| {
            s.lines()
                .filter(|l| {
                    l.strip_prefix("cpu")
                        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
                })
                .count() as u32
        })
        .unwrap_or(1)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(pid: u32, name: &str, ppid: u32, ticks: u64) -> String {
        format!("{pid} ({name}) S {ppid} 1 1 0 -1 4194560 100 0 0 0 {ticks} 0 0 0 20 0 1 0 100 1000000 250 18446744073709551615")
    }

    #[test]
    fn stat_lines_are_read_even_with_odd_names() {
        let p = parse_stat(7, &stat(7, "nginx: worker (x)", 3, 42)).unwrap();
        assert_eq!(
            p,
            Proc {
                pid: 7,
                ppid: 3,
                name: "nginx: worker (x)".into(),
                ticks: 42,
                threads: 1,
                rss_pages: 250
            }
        );
        assert!(parse_stat(1, "garbage").is_none());
    }

    #[test]
    fn a_tree_is_the_root_and_its_descendants() {
        let procs: Vec<Proc> = [
            (1, "init", 0),
            (10, "nginx", 1),
            (11, "nginx", 10),
            (12, "nginx", 10),
            (13, "cache", 11),
            (20, "other", 1),
        ]
        .iter()
        .map(|&(pid, name, ppid)| parse_stat(pid, &stat(pid, name, ppid, 0)).unwrap())
        .collect();
        let pids: Vec<u32> = tree(10, &procs).iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![10, 11, 12, 13]);
        assert!(tree(99, &procs).is_empty());
    }

    #[test]
    fn this_machine_has_cores() {
        assert!(cores_online() >= 1);
        assert!(scan().iter().any(|p| p.pid == std::process::id()));
    }
}
