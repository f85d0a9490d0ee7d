//! Targets a pod cannot mean: a loopback address (`localhost`, 127.0.0.0/8, `::1`) is the
//! pod itself, and a link-local one (169.254.0.0/16, fe80::/10) the pod's own link or the
//! node's metadata service, not the machine `headroom kube` ran on. A scenario tried on a
//! laptop against `localhost` would otherwise send its whole load into each pod's empty
//! port and report only refusals.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What a host means from inside a pod, when it is not a host elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Local {
    /// The pod itself.
    Loopback,
    /// The pod's own link (or the node's metadata service at 169.254.169.254).
    LinkLocal,
    /// Every address of the pod (`0.0.0.0`, `::`): connecting to it reaches the pod.
    Unspecified,
}

/// What `host` (a URL's host: a name or an IP literal without brackets) is inside a pod,
/// none when it may be another machine. Names are not resolved (the cluster's DNS is not
/// this machine's): only the names every pod's /etc/hosts gives loopback addresses.
pub fn local(host: &str) -> Option<Local> {
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    // RFC 6761 keeps `localhost` and its subdomains for loopback; the kubelet's /etc/hosts
    // adds the ip6- names.
    if name == "localhost"
        || name.ends_with(".localhost")
        || name == "ip6-localhost"
        || name == "ip6-loopback"
    {
        return Some(Local::Loopback);
    }
    let ip = match name.parse::<IpAddr>() {
        Ok(ip) => ip,
        Err(_) => IpAddr::V4(resolver_ipv4(&name)?),
    };
    of_ip(ip)
}

fn of_ip(ip: IpAddr) -> Option<Local> {
    match ip {
        IpAddr::V4(v4) => of_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => of_v4(v4),
            None => of_v6(v6),
        },
    }
}

fn of_v4(ip: Ipv4Addr) -> Option<Local> {
    if ip.is_loopback() {
        Some(Local::Loopback)
    } else if ip.is_link_local() {
        Some(Local::LinkLocal)
    } else if ip.is_unspecified() {
        Some(Local::Unspecified)
    } else {
        None
    }
}

fn of_v6(ip: Ipv6Addr) -> Option<Local> {
    if ip.is_loopback() {
        Some(Local::Loopback)
    } else if ip.segments()[0] & 0xffc0 == 0xfe80 {
        Some(Local::LinkLocal)
    } else if ip.is_unspecified() {
        Some(Local::Unspecified)
    } else {
        None
    }
}

/// The IPv4 address the C resolver (`inet_aton`) reads from `s`, which takes more than
/// dotted quads: `127.1`, `0x7f.0.0.1`, `017700000001` and `2130706433` are all 127.0.0.1
/// to the pod's resolver, and std's strict parser reads none of them. Written here because
/// it is only this check's question: would the pod's resolver call it an address?
fn resolver_ipv4(s: &str) -> Option<Ipv4Addr> {
    let parts: Vec<u64> = s
        .split('.')
        .map(|p| {
            let (digits, radix) = if let Some(hex) = p.strip_prefix("0x") {
                (hex, 16)
            } else if p.len() > 1 && p.starts_with('0') {
                (&p[1..], 8)
            } else {
                (p, 10)
            };
            match digits.is_empty() && radix == 16 {
                // `0x` alone is zero to inet_aton.
                true => Some(0),
                false => u64::from_str_radix(digits, radix).ok(),
            }
        })
        .collect::<Option<_>>()?;
    // a, a.b (b: 24 bits), a.b.c (c: 16 bits), a.b.c.d; the leading parts are bytes.
    let (last, head) = parts.split_last()?;
    if head.len() > 3 || head.iter().any(|&b| b > 255) {
        return None;
    }
    let bits = 8 * (4 - head.len() as u32);
    if *last >= 1u64 << bits {
        return None;
    }
    let value = head
        .iter()
        .enumerate()
        .fold(*last, |acc, (i, &b)| acc | b << (24 - 8 * i as u32));
    Some(Ipv4Addr::from(value as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_and_link_local_are_found_however_written() {
        for host in [
            "localhost",
            "LOCALHOST.",
            "api.localhost",
            "ip6-localhost",
            "127.0.0.1",
            "127.9.8.7",
            "127.1",
            "0x7f.0.0.1",
            "017700000001",
            "2130706433",
            "::1",
            "::ffff:127.0.0.1",
        ] {
            assert_eq!(local(host), Some(Local::Loopback), "{host}");
        }
        for host in ["169.254.169.254", "169.254.1.1", "fe80::1", "febf::1"] {
            assert_eq!(local(host), Some(Local::LinkLocal), "{host}");
        }
        for host in ["0.0.0.0", "::", "0"] {
            assert_eq!(local(host), Some(Local::Unspecified), "{host}");
        }
        for host in [
            "shop.example.test",
            "10.0.0.1",
            "128.0.0.1",
            "169.255.0.1",
            "fec0::1",
            "2001:db8::1",
            "localhost.example.com",
            "127.0.0.1.nip.io",
            "1.2.3.4.5",
            "256.0.0.1",
            "08.1.1.1",
        ] {
            assert_eq!(local(host), None, "{host}");
        }
    }
}
