//! A direct worker's two epolls and how it sleeps on them.
//!
//! `dials` holds connections being opened; `replies` holds open ones, and `dials` itself, so
//! one wait on `replies` sees everything. The open model sleeps on `dials` alone, so a reply
//! wakes nobody while a new connection's progress is handled at once.
//!
//! Sleeps end at a nanosecond deadline: with `epoll_pwait2` (Linux 5.11) the deadline is the
//! wait's own timeout; on older kernels a timerfd armed at the deadline sits in `dials` and
//! the wait has none (`epoll_wait`'s millisecond timeouts would make every send up to a
//! millisecond late). `HEADROOM_EPOLL_WAIT=1` forces the older way, to test it.

use crate::engine::dial::Wait;
use nix::poll::PollTimeout;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
use rustix::event::epoll as pwait2;
use rustix::time::{timerfd_create, TimerfdClockId, TimerfdFlags, Timespec};
use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

/// The token under which `dials` sits in `replies`.
const DIALS: u64 = u64::MAX;
/// The token of the fallback's timerfd, in `dials`.
const TIMER: u64 = u64::MAX - 1;
/// Events taken per wait; more are taken by waiting again at once.
const BATCH: usize = 256;

/// Which epoll a wait listens on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Listen {
    /// Connections being opened only: replies are left for the next harvest.
    Dials,
    /// Everything.
    All,
}

/// How sleeps reach their deadline.
enum Sleeper {
    /// `epoll_pwait2` with a nanosecond timeout.
    Pwait2(Vec<pwait2::Event>),
    /// `epoll_wait` without a timeout, woken by this timerfd in `dials`.
    Timerfd(OwnedFd, Vec<EpollEvent>),
}

/// The epolls of one worker.
pub struct Poller {
    replies: Epoll,
    dials: Epoll,
    sleeper: Sleeper,
    ready: Vec<u64>,
}

fn interest(wait: Wait) -> EpollFlags {
    match wait {
        Wait::Write => EpollFlags::EPOLLOUT,
        Wait::Read => EpollFlags::EPOLLIN | EpollFlags::EPOLLRDHUP,
    }
}

impl Poller {
    /// Two epolls and the sleeper this kernel allows.
    pub fn new() -> std::io::Result<Poller> {
        let replies = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        let dials = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        replies.add(&dials.0, EpollEvent::new(EpollFlags::EPOLLIN, DIALS))?;
        let forced = std::env::var_os("HEADROOM_EPOLL_WAIT").is_some_and(|v| v == "1");
        let sleeper = if !forced && has_pwait2(&dials) {
            Sleeper::Pwait2(vec![
                pwait2::Event {
                    flags: pwait2::EventFlags::empty(),
                    data: pwait2::EventData::new_u64(0),
                };
                BATCH
            ])
        } else {
            let timer = timerfd_create(
                TimerfdClockId::Monotonic,
                TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
            )?;
            dials.add(&timer, EpollEvent::new(EpollFlags::EPOLLIN, TIMER))?;
            Sleeper::Timerfd(timer, vec![EpollEvent::empty(); BATCH])
        };
        Ok(Poller {
            replies,
            dials,
            sleeper,
            ready: Vec::with_capacity(BATCH),
        })
    }

    /// Watches a connection being opened, under `token`, until it is ready as `wait` says.
    pub fn watch_dial(&self, fd: impl AsFd, token: u64, wait: Wait) -> std::io::Result<()> {
        Ok(self.dials.add(fd, EpollEvent::new(interest(wait), token))?)
    }

    /// Changes what a connection being opened waits for.
    pub fn rewatch_dial(&self, fd: impl AsFd, token: u64, wait: Wait) -> std::io::Result<()> {
        let mut event = EpollEvent::new(interest(wait), token);
        Ok(self.dials.modify(fd, &mut event)?)
    }

    /// Moves an opened connection from `dials` (if `was_dialing`) to `replies`.
    pub fn watch_replies(
        &self,
        fd: impl AsFd,
        token: u64,
        was_dialing: bool,
    ) -> std::io::Result<()> {
        if was_dialing {
            let _ = self.dials.delete(fd.as_fd());
        }
        let flags = EpollFlags::EPOLLIN | EpollFlags::EPOLLRDHUP;
        Ok(self.replies.add(fd, EpollEvent::new(flags, token))?)
    }

    /// The tokens that are ready now, without sleeping (`until` = `None`), or once one is
    /// or `until` comes, at most a batch of them; `true` beside them when the batch was full
    /// and more may be ready. The epolls are level-triggered: what is not handled before the
    /// next wait is returned again. A signal cutting the sleep short returns what there is.
    pub fn wait(&mut self, listen: Listen, until: Option<Instant>) -> (&[u64], bool) {
        self.ready.clear();
        let full = self.wait_once(listen, until);
        // `dials` inside `replies` is ready when a dial (or the timer) is: take what it holds.
        let nested = match self.ready.iter().position(|&t| t == DIALS) {
            Some(i) => {
                self.ready.swap_remove(i);
                self.wait_once(Listen::Dials, None)
            }
            None => false,
        };
        (&self.ready, full || nested)
    }

    /// One wait on `listen`'s epoll; true when it filled a batch.
    fn wait_once(&mut self, listen: Listen, until: Option<Instant>) -> bool {
        let epoll = match listen {
            Listen::Dials => &self.dials,
            Listen::All => &self.replies,
        };
        let n = match &mut self.sleeper {
            Sleeper::Pwait2(events) => {
                let timeout = timespec(until.map_or(std::time::Duration::ZERO, |u| {
                    u.saturating_duration_since(Instant::now())
                }));
                let n = pwait2::wait(&epoll.0, &mut events[..], Some(&timeout)).unwrap_or(0);
                self.ready.extend(events[..n].iter().map(|e| e.data.u64()));
                n
            }
            Sleeper::Timerfd(timer, events) => {
                let timeout = match until {
                    Some(at) if at > Instant::now() => {
                        if crate::timer::arm(timer, at).is_err() {
                            PollTimeout::ZERO
                        } else {
                            PollTimeout::NONE
                        }
                    }
                    _ => PollTimeout::ZERO,
                };
                let n = epoll.wait(events, timeout).unwrap_or(0);
                for e in &events[..n] {
                    if e.data() == TIMER {
                        // Drain its count, so it wakes nobody until it is armed again.
                        let mut count = [0u8; 8];
                        let _ = rustix::io::read(&*timer, &mut count);
                    } else {
                        self.ready.push(e.data());
                    }
                }
                n
            }
        };
        n == BATCH
    }
}

/// True when `epoll_pwait2` works here (a zero-timeout probe): kernels before 5.11 lack it,
/// and some sandboxes' syscall filters refuse it (EPERM); either way the timerfd is used.
fn has_pwait2(epoll: &Epoll) -> bool {
    let mut probe = [pwait2::Event {
        flags: pwait2::EventFlags::empty(),
        data: pwait2::EventData::new_u64(0),
    }];
    pwait2::wait(
        &epoll.0,
        &mut probe[..],
        Some(&timespec(std::time::Duration::ZERO)),
    )
    .is_ok()
}

fn timespec(d: std::time::Duration) -> Timespec {
    Timespec {
        tv_sec: d.as_secs() as i64,
        tv_nsec: i64::from(d.subsec_nanos()),
    }
}
