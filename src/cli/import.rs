//! `headroom import`: a scenario from a HAR file, curl command lines or an OpenAPI 3
//! document, written to `--out` for the user to edit and run.

use super::stoppable::{self, Gate};
use headroom::engine::CancellationToken;
use headroom::plan::import::{self, Imported};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `headroom import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    source: Source,
}

/// Where the scenario is written.
#[derive(Debug, clap::Args)]
struct Output {
    /// Directory to write scenario.yaml and bodies/ into (created if missing).
    #[arg(long, default_value = ".")]
    out: PathBuf,
    /// Replace scenario.yaml and body files already there.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, clap::Subcommand)]
enum Source {
    /// A HAR file saved by a browser's developer tools (or recorded over DevTools).
    Har {
        /// The HAR file.
        file: PathBuf,
        /// Keep images, fonts, stylesheets and scripts (left out by default).
        #[arg(long)]
        keep_static: bool,
        /// The host (host or host:port) whose requests are kept (default: the first page's).
        #[arg(long)]
        host: Option<String>,
        #[command(flatten)]
        output: Output,
    },
    /// curl command lines: each argument one whole command, or --file with one per line.
    Curl {
        /// Commands, each quoted as one argument: 'curl -H "A: b" https://…'.
        commands: Vec<String>,
        /// A file of commands, one per line (a line ending in \ goes on on the next).
        #[arg(long)]
        file: Option<PathBuf>,
        #[command(flatten)]
        output: Output,
    },
    /// An OpenAPI 3 document (YAML or JSON): one request per operation.
    Openapi {
        /// The document.
        file: PathBuf,
        /// The server's base URL, instead of the document's first `servers` entry.
        #[arg(long)]
        server: Option<String>,
        #[command(flatten)]
        output: Output,
    },
}

/// Runs `headroom import`; the first stop signal ends it with nothing written.
pub fn run(args: ImportArgs, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    let stop = shutdown.clone();
    stoppable::run(
        &shutdown,
        "import stopped; nothing was written",
        move |gate| import(args, &stop, &gate),
    )
}

fn import(args: ImportArgs, stop: &CancellationToken, gate: &Gate) -> anyhow::Result<ExitCode> {
    let (imported, output) = match args.source {
        Source::Har {
            file,
            keep_static,
            host,
            output,
        } => {
            let options = import::har::Options { keep_static, host };
            (import::har::import(&file, &options)?, output)
        }
        Source::Curl {
            commands,
            file,
            output,
        } => {
            let mut all: Vec<(String, String)> = commands
                .into_iter()
                .enumerate()
                .map(|(i, c)| (format!("curl command {}", i + 1), c))
                .collect();
            if let Some(file) = file {
                let text = import::read_input(&file)?;
                all.extend(
                    import::curl::split_file(&text)
                        .into_iter()
                        .map(|(line, c)| (format!("{}:{line}", file.display()), c)),
                );
            }
            (import::curl::import(&all)?, output)
        }
        Source::Openapi {
            file,
            server,
            output,
        } => (import::openapi::import(&file, server.as_deref())?, output),
    };
    let written = {
        let _whole = gate.hold();
        import::write(&imported, &output.out, output.force, stop)?
    };
    report(&imported, &written);
    Ok(ExitCode::SUCCESS)
}

/// What was written and what to do next; names of variables, never their values.
fn report(imported: &Imported, written: &import::Written) {
    let n = imported.scenario.requests.len();
    println!(
        "wrote {} ({} request{}, {} body file{})",
        written.scenario.display(),
        n,
        if n == 1 { "" } else { "s" },
        written.bodies.len(),
        if written.bodies.len() == 1 { "" } else { "s" },
    );
    for r in &imported.scenario.requests {
        println!("  request {:<32} {} {}", r.name, r.method, r.path);
    }
    for note in &imported.notes {
        println!("  note    {note}");
    }
    if !imported.variables.is_empty() {
        println!("set before the run:");
        for v in &imported.variables {
            println!("  {:<28} {}", v.name, v.what);
        }
    }
    println!(
        "next: edit the load, then headroom run --check {}",
        written.scenario.display()
    );
}
