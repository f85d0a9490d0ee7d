//! A worker's HTTP/2 connections to one instance: slots that lanes share as streams, each
//! opened when first needed and again when found closed, with the login its requests use
//! (kept across the slot's connections until refused).
//!
//! Lane `i` uses slot `i / max_streams`, so connections fill up before new ones open: a
//! handful of lanes share one connection, as an HTTP/2 client would.

use super::connect;
use super::Sender;
use crate::engine::backoff::Backoff;
use crate::engine::job::{Failure, LoggedIn};
use crate::engine::spec::{ConnSpec, Endpoint};
use crate::sample::Opened;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{Mutex, MutexGuard};

/// One connection of the pool, and what it carries.
#[derive(Default)]
pub struct Slot {
    live: Option<Sender>,
    /// How many times the slot has been (re)connected: names the connection a lane found
    /// wanting, so it is replaced once however many lanes found it.
    generation: u64,
    login: Option<Arc<LoggedIn>>,
}

/// The connections to one instance.
pub struct Pool {
    endpoint: Endpoint,
    slots: Vec<Mutex<Slot>>,
    streams: usize,
    /// One pause for the whole pool, as on HTTP/1.1: a shortage of descriptors is the
    /// worker's, not one connection's.
    backoff: std::sync::Mutex<Backoff>,
}

/// A slot held by one lane: its connection is live; what it logged in with may be renewed
/// before the slot is let go.
pub struct Held<'a> {
    slot: MutexGuard<'a, Slot>,
    /// The connection's opening times, when this lane opened it.
    pub opened: Option<Opened>,
}

impl Held<'_> {
    /// The connection.
    pub fn sender(&self) -> Sender {
        self.slot.live.clone().expect("a held slot is live")
    }

    /// Its generation.
    pub fn generation(&self) -> u64 {
        self.slot.generation
    }

    /// What the connection logged in with.
    pub fn login(&self) -> Option<Arc<LoggedIn>> {
        self.slot.login.clone()
    }

    /// The connection logged in (again).
    pub fn set_login(&mut self, login: LoggedIn) {
        self.slot.login = Some(Arc::new(login));
    }

    /// The connection's login failed: it is not used again.
    pub fn close(mut self) {
        self.slot.live = None;
        self.slot.login = None;
    }
}

impl Pool {
    /// A pool of at most `connections` connections to `endpoint`, `streams` lanes each.
    pub fn new(endpoint: Endpoint, connections: usize, streams: usize) -> Pool {
        Pool {
            endpoint,
            slots: (0..connections.max(1)).map(|_| Mutex::default()).collect(),
            streams: streams.max(1),
            backoff: std::sync::Mutex::default(),
        }
    }

    /// Lane `lane`'s slot, with a live connection: the slot's, or one opened now. `stale`
    /// names a generation the lane found closing (GOAWAY): that one is replaced.
    pub async fn hold(
        &self,
        lane: usize,
        stale: Option<u64>,
        conn: &ConnSpec,
    ) -> Result<Held<'_>, Failure> {
        let mut slot = self.slots[(lane / self.streams) % self.slots.len()]
            .lock()
            .await;
        if let Some(live) = slot.live.as_ref() {
            if !live.is_closed() && stale != Some(slot.generation) {
                return Ok(Held { slot, opened: None });
            }
        }
        // Short of descriptors or ports: send on another live connection of the pool (streams
        // cost no descriptor), or wait out the pause when there is none.
        loop {
            let pause = self.backoff().pending(Instant::now());
            let Some(until) = pause else {
                break;
            };
            if let Some(other) = self.any_live() {
                return Ok(Held {
                    slot: other,
                    opened: None,
                });
            }
            tokio::time::sleep_until(until.into()).await;
        }
        // The slot keeps its login: a connection opened again is not a new identity.
        slot.live = None;
        match connect::open(&self.endpoint, conn).await {
            Ok((sender, opened)) => {
                self.backoff().clear();
                slot.generation += 1;
                slot.live = Some(sender);
                Ok(Held {
                    slot,
                    opened: Some(opened),
                })
            }
            Err(failure) => {
                if Backoff::applies(failure.kind) {
                    self.backoff().hit(Instant::now());
                }
                Err(failure)
            }
        }
    }

    /// Another slot with a live connection, if one is free to look at now.
    fn any_live(&self) -> Option<MutexGuard<'_, Slot>> {
        self.slots.iter().find_map(|slot| {
            let slot = slot.try_lock().ok()?;
            let live = slot.live.as_ref().is_some_and(|l| !l.is_closed());
            live.then_some(slot)
        })
    }

    fn backoff(&self) -> std::sync::MutexGuard<'_, Backoff> {
        self.backoff.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The login `login` was refused: the connection that carries it (whichever slot lent
    /// it) logs in again before its next request.
    pub async fn refuse_login(&self, login: &Arc<LoggedIn>) {
        for slot in &self.slots {
            let mut slot = slot.lock().await;
            if slot.login.as_ref().is_some_and(|l| Arc::ptr_eq(l, login)) {
                slot.login = None;
                return;
            }
        }
    }
}
