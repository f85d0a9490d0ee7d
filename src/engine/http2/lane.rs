//! A lane: one task that takes jobs one after another and sends each as a stream on a
//! shared connection (or on its own connection, without keep-alive), runs the steps of its
//! flow iteration after it, and records every outcome by the shared rules.

use super::{connect, exchange, lock, Sender, Worker};
use crate::engine::job::{Failure, Job, LoggedIn, Unprocessed};
use crate::engine::reply::Reply;
use crate::engine::settle::{self, Sent};
use crate::sample::ErrorKind;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// A connection a lane sends on, and what it logged in with.
struct Conn {
    sender: Sender,
    /// The pool generation, to replace it once when found wanting; `None` for a
    /// connection of the lane's own.
    generation: Option<u64>,
    login: Option<Arc<LoggedIn>>,
}

struct Lane {
    worker: Arc<Worker>,
    id: usize,
    /// A connection per instance, kept between jobs when the run has no login (with one,
    /// each job asks its slot, whose login may have been renewed or refused meanwhile).
    cached: Vec<Option<Conn>>,
    /// The attempt in progress left at this time, once it did.
    sent: Option<Sent>,
    /// The pool generation of the connection the attempt in progress used.
    generation: Option<u64>,
    /// What the connection of the attempt in progress logged in with.
    login: Option<Arc<LoggedIn>>,
    /// Without keep-alive, the lane's own login per instance, kept across the connections
    /// it opens (a closed connection is not a new login).
    own_login: Vec<Option<Arc<LoggedIn>>>,
    /// The deadline of the exchange in progress, `--timeout` after its send as on
    /// HTTP/1.1: reset for each (cheaper than a timer made and dropped per request).
    deadline: std::pin::Pin<Box<tokio::time::Sleep>>,
}

/// How an attempt ended.
enum Attempt {
    Answered(Reply, Sent),
    Failed(Failure),
}

/// Runs lane `id` until its worker has no more jobs for it.
pub(super) async fn run(worker: Arc<Worker>, id: usize) {
    let instances = worker.spec.requests.instances;
    let mut lane = Lane {
        worker: worker.clone(),
        id,
        cached: (0..instances).map(|_| None).collect(),
        sent: None,
        generation: None,
        login: None,
        own_login: (0..instances).map(|_| None).collect(),
        deadline: Box::pin(tokio::time::sleep(std::time::Duration::ZERO)),
    };
    let jobs = async {
        while let Some((intended, n)) = worker.next_job(id).await {
            // The job, then the steps after it in its flow iteration.
            let job = Job::arrival(&worker.spec.requests, intended, n);
            let mut next = lane.one(job).await;
            while let Some(job) = next {
                if worker.cancel.is_cancelled() {
                    break;
                }
                if job.intended > Instant::now() {
                    tokio::time::sleep_until(job.intended.into()).await;
                }
                next = lane.one(job).await;
            }
        }
    };
    // Once the grace after a stop is over, the lane ends: polled first, the jobs record a
    // request on the wire as unanswered (`exchange`) and find no next job; what is dropped
    // here is a lane connecting, logging in unsent, or thinking: nothing it had sent.
    tokio::select! {
        biased;
        () = jobs => {}
        () = worker.give_up.cancelled() => {}
    }
    worker.lane_finished();
}

impl Lane {
    /// Sends one job (once more when the retry rule allows) and records it; the next step
    /// of its flow iteration when the flow goes on.
    async fn one(&mut self, mut job: Job) -> Option<Job> {
        let spec = self.worker.spec.clone();
        let mut stale = None;
        loop {
            self.sent = None;
            let failure = match self.attempt(&mut job, stale).await {
                Attempt::Answered(reply, sent) => return self.answered(job, reply, sent).await,
                Attempt::Failed(failure) => failure,
            };
            let instance = usize::from(job.instance);
            let template = spec.requests.template(instance, job.request);
            self.cached[instance] = None;
            if !self.worker.cancel.is_cancelled()
                && lock(&self.worker.tally).may_retry(&job, failure, template.method())
            {
                stale = self.generation;
                job = job.again();
                continue;
            }
            let end = Instant::now();
            let sample = settle::failed(&spec, &job, self.sent, failure.kind, end);
            self.worker.record(&sample, end);
            return None;
        }
    }

    /// Judges and records an answer; the flow's next step if it goes on.
    async fn answered(&mut self, mut job: Job, reply: Reply, sent: Sent) -> Option<Job> {
        let spec = self.worker.spec.clone();
        let verdict = settle::judge(&spec, &mut job, &reply, sent);
        self.worker.record(&verdict.sample, reply.end.max(sent.at));
        let login = self.login.take();
        if verdict.refused {
            let instance = usize::from(job.instance);
            if let Some(login) = login {
                match &self.worker.pools {
                    Some(pools) => Box::pin(pools[instance].refuse_login(&login)).await,
                    None => {
                        let own = &mut self.own_login[instance];
                        if own.as_ref().is_some_and(|l| Arc::ptr_eq(l, &login)) {
                            *own = None;
                        }
                    }
                }
            }
        }
        if !verdict.expected {
            return None;
        }
        job.next_step(&spec.requests, Instant::now())
    }

    /// One try: a connection (logged in if the run has a login), the request, its answer.
    async fn attempt(&mut self, job: &mut Job, stale: Option<u64>) -> Attempt {
        let instance = usize::from(job.instance);
        self.generation = None;
        let (mut conn, opened) = match self.connection(instance, stale).await {
            Ok(got) => got,
            Err(failure) => return Attempt::Failed(failure),
        };
        self.generation = conn.generation;
        self.login = conn.login.clone();
        let result = self.exchange(&mut conn, job, opened).await;
        // Without keep-alive the connection is this request's alone.
        if conn.generation.is_some() && self.worker.spec.requests.login.is_none() {
            self.cached[instance] = Some(conn);
        }
        match result {
            Ok((reply, sent)) => Attempt::Answered(reply, sent),
            Err(failure) => Attempt::Failed(failure),
        }
    }

    /// Sends `job` on `conn` and reads its answer.
    async fn exchange(
        &mut self,
        conn: &mut Conn,
        job: &mut Job,
        opened: Option<crate::sample::Opened>,
    ) -> Result<(Reply, Sent), Failure> {
        let spec = self.worker.spec.clone();
        let template = spec
            .requests
            .template(usize::from(job.instance), job.request);
        let vars = job.vars(conn.login.as_deref());
        // Nothing to send (its data ran out): a failure the server never saw, not retried.
        let request = template
            .h2(job.turn(&spec.requests), &vars)
            .map_err(Failure::from)?;
        exchange::ready(&mut conn.sender).await?;
        // Stamped before the stream leaves, as on HTTP/1.1.
        let at = Instant::now();
        job.leaving(at, spec.pace.pacer.is_some());
        let stage = spec.stage_of(job.intended, job.n);
        lock(&self.worker.tally).sent(job, at, stage);
        let sent = Sent {
            at,
            body_bytes: request.body.len() as u64,
            opened,
        };
        self.sent = Some(sent);
        self.deadline
            .as_mut()
            .reset((at + spec.conn.timeout).into());
        let keep = template.keeps_response();
        tokio::select! {
            biased;
            reply = exchange::send(&mut conn.sender, request, keep) => Ok((reply?, sent)),
            // The stream is reset as its future is dropped; the connection lives on.
            () = self.deadline.as_mut() => Err(ErrorKind::Timeout.into()),
            () = self.worker.give_up.cancelled() => Err(ErrorKind::Unanswered.into()),
        }
    }

    /// A connection to `instance`: the lane's cached one, its slot's, or its own (without
    /// keep-alive), logged in first when the run has a login and it is not yet.
    async fn connection(
        &mut self,
        instance: usize,
        stale: Option<u64>,
    ) -> Result<(Conn, Option<crate::sample::Opened>), Failure> {
        if let Some(conn) = self.cached[instance].take() {
            if !conn.sender.is_closed() {
                return Ok((conn, None));
            }
        }
        // Boxed, the large futures of opening and logging in are not copied into (and moved
        // with) every request's; a run with a login comes here for every request (to see its
        // slot's login), at the cost of that allocation.
        Box::pin(self.open(instance, stale)).await
    }

    /// A connection not cached by the lane: its slot's, or its own without keep-alive.
    async fn open(
        &mut self,
        instance: usize,
        stale: Option<u64>,
    ) -> Result<(Conn, Option<crate::sample::Opened>), Failure> {
        let worker = self.worker.clone();
        let spec = &worker.spec;
        let Some(pools) = &worker.pools else {
            let endpoint = &spec.conn.endpoints[instance];
            let (sender, opened) = connect::open(endpoint, &spec.conn).await?;
            let mut conn = Conn {
                sender,
                generation: None,
                login: self.own_login[instance].clone(),
            };
            if let Some(rule) = &spec.requests.login {
                if LoggedIn::stale(conn.login.as_deref(), rule, Instant::now()) {
                    let login =
                        Arc::new(self.login(&mut conn, instance, rule, Some(opened)).await?);
                    self.own_login[instance] = Some(login.clone());
                    conn.login = Some(login);
                    return Ok((conn, None));
                }
            }
            return Ok((conn, Some(opened)));
        };
        let mut held = pools[instance].hold(self.id, stale, &spec.conn).await?;
        let mut opened = held.opened.take();
        let mut conn = Conn {
            sender: held.sender(),
            generation: Some(held.generation()),
            login: held.login(),
        };
        if let Some(rule) = &spec.requests.login {
            if LoggedIn::stale(conn.login.as_deref(), rule, Instant::now()) {
                match self.login(&mut conn, instance, rule, opened.take()).await {
                    Ok(login) => {
                        held.set_login(login);
                        conn.login = held.login();
                    }
                    Err(failure) => {
                        held.close();
                        return Err(failure);
                    }
                }
            }
        }
        Ok((conn, opened))
    }

    /// Runs the login on `conn` and records it (its own row in the report); the values it
    /// captured, or `login_failed` for the request that waited for it.
    async fn login(
        &mut self,
        conn: &mut Conn,
        instance: usize,
        rule: &crate::plan::Login,
        opened: Option<crate::sample::Opened>,
    ) -> Result<LoggedIn, Failure> {
        let spec = self.worker.spec.clone();
        let count = self.worker.logins.fetch_add(1, Ordering::Relaxed);
        let mut job = Job::login(
            rule,
            count,
            self.worker.index,
            spec.pace.threads,
            instance as u16,
            Instant::now(),
        );
        let exchanged = self.exchange(conn, &mut job, opened).await;
        // What the login sent is not the stamp of the request that waits for it.
        let login_sent = self.sent.take();
        match exchanged {
            Ok((reply, sent)) => {
                let verdict = settle::judge(&spec, &mut job, &reply, sent);
                self.worker.record(&verdict.sample, reply.end.max(sent.at));
                match verdict.logged_in {
                    Some(vars) => Ok(LoggedIn {
                        vars,
                        at: Instant::now(),
                    }),
                    None => Err(ErrorKind::LoginFailed.into()),
                }
            }
            // Not processed (a closing connection): the request that waited is sent again
            // by the retry rule, with a new connection and a new login.
            Err(failure) if failure.unprocessed != Unprocessed::No => Err(failure),
            Err(failure) => {
                let end = Instant::now();
                let sample = settle::failed(&spec, &job, login_sent, failure.kind, end);
                self.worker.record(&sample, end);
                Err(ErrorKind::LoginFailed.into())
            }
        }
    }
}
