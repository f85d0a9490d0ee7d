//! The live server's answers over real loopback sockets: what it refuses, and that a
//! refusal never takes it down.

use super::*;
use std::io::{Read, Write};
use std::net::TcpStream;

/// Sends `head` (a request without its final blank line) and reads the answer whole.
fn ask(addr: SocketAddr, head: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    write!(s, "{head}\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    let status = text.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, text)
}

fn loopback(max_viewers: usize) -> LiveServer {
    LiveServer::start(LiveSettings {
        max_viewers,
        stops: Some(CancellationToken::new()),
        ..LiveSettings::default()
    })
    .unwrap()
}

#[test]
fn a_page_with_no_run_to_stop_has_no_stop_button_even_with_the_token() {
    // `watch`: the runs are other processes'.
    let live = LiveServer::start(LiveSettings::default()).unwrap();
    let addr = live.addr();
    let (status, page) = ask(addr, &format!("GET /?token={} HTTP/1.1", live.token()));
    assert_eq!(status, 200);
    assert!(!page.contains("id=\"stop\""));
    let (status, body) = ask(
        addr,
        &format!("POST /stop HTTP/1.1\r\nx-headroom-token: {}", live.token()),
    );
    assert_eq!(status, 403);
    assert!(body.contains("it cannot stop them"), "{body}");
    assert!(!live.stop_requested().is_cancelled());
}

#[test]
fn bad_paths_methods_and_bytes_get_a_4xx_and_the_server_goes_on() {
    let live = loopback(2);
    let addr = live.addr();
    assert!(addr.ip().is_loopback());
    assert_eq!(ask(addr, "GET /etc/passwd HTTP/1.1").0, 404);
    assert_eq!(ask(addr, "GET /../../x HTTP/1.1").0, 404);
    assert_eq!(ask(addr, "DELETE / HTTP/1.1").0, 405);
    assert_eq!(ask(addr, "PUT /events HTTP/1.1").0, 405);
    // Not HTTP at all: refused by hyper with a 400.
    let (status, _) = ask(addr, "\u{1}\u{2}garbage");
    assert!(status == 400 || status == 0, "{status}");
    // Not finished yet: the report is not there to serve.
    assert_eq!(ask(addr, "GET /report HTTP/1.1").0, 404);
    // Still serving, and the page is read-only without the token.
    let (status, page) = ask(addr, "GET / HTTP/1.1");
    assert_eq!(status, 200);
    assert!(page.contains("id=\"headroom-figures\""));
    assert!(!page.contains("id=\"stop\""));
    let (status, page) = ask(addr, &format!("GET /?token={} HTTP/1.1", live.token()));
    assert_eq!(status, 200);
    assert!(page.contains("id=\"stop\""));
}

#[test]
fn the_stop_needs_the_token_and_cancels_the_run_it_was_given() {
    let run = CancellationToken::new();
    let live = LiveServer::start(LiveSettings {
        stops: Some(run.clone()),
        ..LiveSettings::default()
    })
    .unwrap();
    let addr = live.addr();
    assert_eq!(ask(addr, "POST /stop HTTP/1.1").0, 403);
    assert_eq!(ask(addr, "POST /stop?token=0000 HTTP/1.1").0, 403);
    assert!(!run.is_cancelled() && !live.stop_requested().is_cancelled());
    let (status, _) = ask(
        addr,
        &format!("POST /stop HTTP/1.1\r\nx-headroom-token: {}", live.token()),
    );
    assert_eq!(status, 202);
    assert!(run.is_cancelled() && live.stop_requested().is_cancelled());
    // The token is printed for the starter, never in a debug print of the server.
    assert!(!format!("{live:?}").contains(live.token()));
    assert!(live.url().ends_with(&format!("/?token={}", live.token())));
    assert!(!live.public_url().contains(live.token()));
}

#[test]
fn past_the_most_viewers_one_more_gets_503_and_a_closed_one_frees_its_place() {
    let live = loopback(2);
    let addr = live.addr();
    let follow = || {
        let mut s = TcpStream::connect(addr).unwrap();
        write!(s, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        let mut head = [0u8; 12];
        s.read_exact(&mut head).unwrap();
        assert_eq!(&head[9..12], b"200");
        s
    };
    let a = follow();
    let _b = follow();
    let (status, body) = ask(addr, "GET /events HTTP/1.1");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("too many pages"));
    drop(a);
    // The server notices the closed page when it next writes to it or reads its end.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let s = follow_or_none(addr);
        if s {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the place was never freed"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn follow_or_none(addr: SocketAddr) -> bool {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && &head[9..12] == b"200"
}

#[test]
fn off_loopback_every_request_needs_the_token() {
    let live = LiveServer::start(LiveSettings {
        addr: SocketAddr::from(([0, 0, 0, 0], 0)),
        ..LiveSettings::default()
    })
    .unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], live.addr().port()));
    for path in ["/", "/events", "/report"] {
        let (status, body) = ask(addr, &format!("GET {path} HTTP/1.1"));
        assert_eq!(status, 403, "{path}: {body}");
        assert!(body.contains("token"), "{body}");
    }
    let (status, _) = ask(addr, &format!("GET /?token={} HTTP/1.1", live.token()));
    assert_eq!(status, 200);
}

#[test]
fn a_page_that_stops_reading_is_dropped_and_its_place_freed() {
    use std::sync::atomic::Ordering;
    let live = loopback(1);
    let addr = live.addr();
    // Follows, then never reads again: its socket's buffers fill with frames.
    let mut stalled = TcpStream::connect(addr).unwrap();
    write!(stalled, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while live.shared.viewers.load(Ordering::SeqCst) == 0 {
        assert!(std::time::Instant::now() < deadline);
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let big: String = "x".repeat(1 << 20);
    let mut n = 0u64;
    while live.shared.viewers.load(Ordering::SeqCst) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "a stalled page still holds its place after {n} frames"
        );
        n += 1;
        live.shared
            .frames
            .send_replace(Arc::from(format!("event: frame\ndata: {n}{big}\n\n")));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Its place is free: another page follows.
    assert!(follow_or_none(addr));
    drop(stalled);
}

#[test]
fn the_end_is_found_after_the_last_frame_and_never_inside_a_frames_data() {
    use super::frame::holds_end;
    assert!(holds_end(b"event: end\ndata: {}\n\n"));
    assert!(holds_end(
        b"event: frame\ndata: {\"n\":1}\n\nevent: end\ndata: {}\n\n"
    ));
    // JSON escapes its newlines: a frame whose text speaks of the end is a frame.
    assert!(!holds_end(
        b"event: frame\ndata: {\"a\":\"\\n\\nevent: end\\n\"}\n\n"
    ));
}
