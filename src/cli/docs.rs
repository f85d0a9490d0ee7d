//! `headroom completions`, `headroom man` and `headroom schema`: shell completions, man pages,
//! markdown pages and the scenario schema, all generated from the definitions (clap's, the
//! scenario types'), so they never drift from the flags and fields.

use anyhow::Context;
use clap::{Args, CommandFactory};
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `headroom completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for: bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

/// Options of `headroom man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write one page per command (headroom.1, headroom-attack.1, …) into this directory
    /// instead of printing headroom.1 to standard output.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Write markdown pages (README.md and NAME.md per command) instead of man pages, keeping
    /// what each page has below its hand-written marker: `man --markdown --dir docs/commands`.
    #[arg(long, requires = "dir")]
    pub markdown: bool,
}

/// Options of `headroom schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Print the scenario file reference in markdown (docs/scenario.md) instead of the JSON
    /// Schema.
    #[arg(long)]
    pub markdown: bool,
}

/// Prints the JSON Schema of scenario files, or the reference rendered from it.
pub fn schema(args: SchemaArgs) -> anyhow::Result<ExitCode> {
    let json = headroom::plan::scenario::json_schema();
    let text = if args.markdown {
        super::schema_page::render(&json).context("cannot read the scenario schema back")?
    } else {
        json
    };
    to_stdout(format!("{text}\n").as_bytes())
}

/// Prints the completion script for `args.shell` to standard output.
pub fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = super::Cli::command();
    // Into memory first: clap_complete panics when its writer fails (`| head` closes it).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "headroom", &mut script);
    to_stdout(&script)
}

/// Prints the main man page, or writes every command's page into a directory.
pub fn man(args: ManArgs) -> anyhow::Result<ExitCode> {
    let cmd = super::Cli::command();
    match args.dir {
        Some(dir) if args.markdown => {
            let written = super::command_pages::write(cmd, &dir).with_context(|| {
                format!("cannot write the markdown pages into {}", dir.display())
            })?;
            eprintln!(
                "{} markdown pages in {} (the index: {}/README.md)",
                written.len(),
                dir.display(),
                dir.display()
            );
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
            eprintln!(
                "man pages in {} (read one: man {}/headroom.1)",
                dir.display(),
                dir.display()
            );
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut page)
                .context("cannot render the man page")?;
            return to_stdout(&page);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `bytes` to standard output; a reader that stopped early (`| head`) is no error.
fn to_stdout(bytes: &[u8]) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to standard output")
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}
