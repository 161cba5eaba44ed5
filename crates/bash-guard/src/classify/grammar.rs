//! The option grammars of the commands no sandbox can contain ([`crate::SubCommand::unconfinable`]): such a
//! command runs outside the sandbox only when the analysis understands every one of its words, so each program
//! (and sub-command) has its options listed here with what each value is: a flag, plain data, a path read or
//! written, the name of a variable of the host's environment, a mount. A word the grammar does not know (an
//! option, a sub-command, a program without a grammar) keeps the command in the sandbox, with the reason.
//!
//! Options that hand a container the host itself (`--privileged`, `--pid=host`, `--ipc`, `--userns`, `--cap-add`,
//! `--device`, `--security-opt`) are not in the grammar: with them the container's command acts on this machine,
//! which the analysis does not read.
//!
//! `--opt VALUE`, `--opt=VALUE` and attached short values (`-vX`, `-oX`) are read the same way; the paths found go
//! into the command's reads and writes, where the same checks as for every other file apply.
//!
//! The options are read here rather than by the reader every other command goes through (crate::options): that
//! reader follows getopt for all commands alike, taking an option it does not know as a flag, accepting
//! abbreviations, and giving an attached value as plain text; here an option must be known exactly (these tools
//! parse with pflag or Go's flag package, which take no abbreviations and read `-flag=value` with one dash), each
//! value has a kind the reader's syntax cannot hold, and an attached value keeps what the shell does to it
//! (`--mount=$SRC` is only known at run time).

use crate::analysis::AccessVia;
use crate::knowledge::Recursion;
use crate::word::{Word, path_word};

use super::{Classified, container, remote};

mod cloud;
use cloud::cloud;

/// What an option's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// No value.
    Flag,
    /// Plain data (a name, a number, a format, a URL).
    Data,
    /// A path this machine's file system is read at.
    Read,
    /// A path written.
    Write,
    /// `NAME=VALUE` (data) or `NAME`: the host's variable of that name is passed on.
    Env,
    /// `-v SRC:DST[:OPTS]`.
    Volume,
    /// `--mount k=v,…`.
    Mount,
    /// `build --secret id=…,src=…|env=…` and `--ssh`.
    Secret,
    /// `--build-context NAME=PATH`.
    Context,
    /// `volume create --opt KEY=VALUE`: `device=PATH` binds that place.
    VolumeOpt,
    /// `ssh -o KEY=VALUE`.
    SshOption,
    /// `kubectl -o FORMAT`: `jsonpath-file=F`, `go-template-file=F`, `template-file=F` read F.
    KubeOutput,
    /// `helm --set-file KEY=FILE[,KEY=FILE]`.
    SetFile,
    /// `terraform init -backend-config=KEY=VALUE|FILE`.
    BackendConfig,
}

/// An option table: names and what their value is.
type Options = &'static [(&'static [&'static str], Value)];

/// What a level's operands are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operands {
    /// Plain data, options anywhere among them.
    Data,
    /// The first operand (an image, a container, a service) ends the options; the words after it are the
    /// command run inside, which acts there.
    Command,
    /// A build context: read whole.
    Context,
    /// Paths read.
    Reads,
    /// Paths written.
    Writes,
    /// A chart: a path when it looks like one.
    Chart,
}

/// One sub-command: its words, its options and its operands.
struct Level {
    path: &'static [&'static str],
    options: Options,
    operands: Operands,
}

const HELP: Options = &[(&["-h", "--help"], Value::Flag)];

#[rustfmt::skip]
const DOCKER_GLOBAL: Options = &[
    (&["-D", "--debug"], Value::Flag),
    (&["-c", "--context", "-l", "--log-level"], Value::Data),
    (&["--config"], Value::Read),
];

#[rustfmt::skip]
const RUN: Options = &[
    (&[
        "-d", "--detach", "-i", "--interactive", "-t", "--tty", "--rm", "--init", "-P", "--publish-all",
        "--read-only", "-q", "--quiet", "--no-healthcheck", "--replace",
    ], Value::Flag),
    (&[
        "--name", "-p", "--publish", "--network", "--net", "-w", "--workdir", "-u", "--user", "--entrypoint", "-h",
        "--hostname", "--restart", "--platform", "--pull", "-m", "--memory", "--cpus", "-l", "--label", "--add-host",
        "--expose", "--dns", "--tmpfs", "--shm-size", "--stop-signal", "--stop-timeout", "--ulimit",
        "--cap-drop", "--gpus", "--memory-swap", "--cpu-shares", "--network-alias", "--health-cmd",
        "--health-interval", "--health-retries", "--health-timeout", "--log-driver", "--log-opt", "--ip",
        "--hostname", "--volumes-from", "--link",
    ], Value::Data),
    (&["-e", "--env"], Value::Env),
    (&["--env-file", "--label-file"], Value::Read),
    (&["--cidfile"], Value::Write),
    (&["-v", "--volume"], Value::Volume),
    (&["--mount"], Value::Mount),
];

#[rustfmt::skip]
const EXEC: Options = &[
    (&["-d", "--detach", "-i", "--interactive", "-t", "--tty"], Value::Flag),
    (&["-u", "--user", "-w", "--workdir"], Value::Data),
    (&["-e", "--env"], Value::Env),
    (&["--env-file"], Value::Read),
];

#[rustfmt::skip]
const BUILD: Options = &[
    (&["--no-cache", "--pull", "-q", "--quiet", "--rm", "--force-rm", "--load", "--push"], Value::Flag),
    (&["-t", "--tag", "--target", "--platform", "--label", "--progress", "--network", "--add-host"], Value::Data),
    (&["--build-arg"], Value::Env),
    (&["-f", "--file"], Value::Read),
    (&["--iidfile", "--metadata-file"], Value::Write),
    (&["--secret", "--ssh"], Value::Secret),
    (&["--build-context"], Value::Context),
];

#[rustfmt::skip]
const PS: Options = &[
    (&["-a", "--all", "-q", "--quiet", "--no-trunc", "-s", "--size", "-l", "--latest"], Value::Flag),
    (&["--format", "-f", "--filter", "-n", "--last"], Value::Data),
];

#[rustfmt::skip]
const LOGS: Options = &[
    (&["-f", "--follow", "-t", "--timestamps", "--details"], Value::Flag),
    (&["--tail", "-n", "--since", "--until"], Value::Data),
];

#[rustfmt::skip]
const IMAGES: Options = &[
    (&["-a", "--all", "-q", "--quiet", "--no-trunc", "--digests"], Value::Flag),
    (&["--format", "-f", "--filter"], Value::Data),
];

#[rustfmt::skip]
const PULL: Options = &[
    (&["-a", "--all-tags", "-q", "--quiet"], Value::Flag),
    (&["--platform"], Value::Data),
];

const STOP: Options = &[(&["-t", "--time", "--timeout", "-s", "--signal"], Value::Data)];

const START: Options = &[(&["-a", "--attach", "-i", "--interactive"], Value::Flag)];

const RM: Options = &[(
    &["-f", "--force", "-v", "--volumes", "-l", "--link", "--no-prune"],
    Value::Flag,
)];

#[rustfmt::skip]
const INSPECT: Options = &[
    (&["-s", "--size"], Value::Flag),
    (&["-f", "--format", "--type"], Value::Data),
];

#[rustfmt::skip]
const LIST: Options = &[
    (&["-q", "--quiet"], Value::Flag),
    (&["-f", "--filter", "--format"], Value::Data),
];

#[rustfmt::skip]
const VOLUME_CREATE: Options = &[
    (&["--name", "-d", "--driver", "--label"], Value::Data),
    (&["-o", "--opt"], Value::VolumeOpt),
];

const FORMAT: Options = &[(&["-f", "--format"], Value::Data)];

/// `docker`, `podman`, `nerdctl` (with `container` and `image` groups folded away, `buildx build` as `build`).
#[rustfmt::skip]
const DOCKER: &[Level] = &[
    Level { path: &["run"], options: RUN, operands: Operands::Command },
    Level { path: &["create"], options: RUN, operands: Operands::Command },
    Level { path: &["exec"], options: EXEC, operands: Operands::Command },
    Level { path: &["build"], options: BUILD, operands: Operands::Context },
    Level { path: &["buildx", "build"], options: BUILD, operands: Operands::Context },
    Level { path: &["ps"], options: PS, operands: Operands::Data },
    Level { path: &["ls"], options: PS, operands: Operands::Data },
    Level { path: &["logs"], options: LOGS, operands: Operands::Data },
    Level { path: &["images"], options: IMAGES, operands: Operands::Data },
    Level { path: &["pull"], options: PULL, operands: Operands::Data },
    Level { path: &["push"], options: PULL, operands: Operands::Data },
    Level { path: &["stop"], options: STOP, operands: Operands::Data },
    Level { path: &["restart"], options: STOP, operands: Operands::Data },
    Level { path: &["start"], options: START, operands: Operands::Data },
    Level { path: &["rm"], options: RM, operands: Operands::Data },
    Level { path: &["rmi"], options: RM, operands: Operands::Data },
    Level { path: &["inspect"], options: INSPECT, operands: Operands::Data },
    Level { path: &["volume", "ls"], options: LIST, operands: Operands::Data },
    Level { path: &["volume", "create"], options: VOLUME_CREATE, operands: Operands::Data },
    Level { path: &["volume", "rm"], options: RM, operands: Operands::Data },
    Level { path: &["network", "ls"], options: LIST, operands: Operands::Data },
    Level { path: &["version"], options: FORMAT, operands: Operands::Data },
    Level { path: &["info"], options: FORMAT, operands: Operands::Data },
];

#[rustfmt::skip]
const COMPOSE_GLOBAL: Options = &[
    (&["--dry-run", "--compatibility"], Value::Flag),
    (&["-p", "--project-name", "--profile", "--ansi", "--progress"], Value::Data),
    (&["-f", "--file", "--env-file", "--project-directory"], Value::Read),
];

#[rustfmt::skip]
const COMPOSE_UP: Options = &[
    (&[
        "-d", "--detach", "--build", "--no-build", "--force-recreate", "--remove-orphans", "--no-deps", "--wait",
        "-V", "--renew-anon-volumes", "--abort-on-container-exit", "--quiet-pull", "--no-start", "--no-recreate",
    ], Value::Flag),
    (&["--scale", "-t", "--timeout", "--pull", "--wait-timeout"], Value::Data),
];

#[rustfmt::skip]
const COMPOSE_DOWN: Options = &[
    (&["-v", "--volumes", "--remove-orphans"], Value::Flag),
    (&["--rmi", "-t", "--timeout"], Value::Data),
];

#[rustfmt::skip]
const COMPOSE_PS: Options = &[
    (&["-a", "--all", "-q", "--quiet", "--services"], Value::Flag),
    (&["--format", "--status", "--filter"], Value::Data),
];

#[rustfmt::skip]
const COMPOSE_LOGS: Options = &[
    (&["-f", "--follow", "-t", "--timestamps", "--no-color", "--no-log-prefix"], Value::Flag),
    (&["--tail", "-n", "--since", "--until"], Value::Data),
];

#[rustfmt::skip]
const COMPOSE_BUILD: Options = &[
    (&["--no-cache", "--pull", "-q", "--quiet"], Value::Flag),
    (&["--progress"], Value::Data),
    (&["--build-arg"], Value::Env),
];

#[rustfmt::skip]
const COMPOSE_RUN: Options = &[
    (&[
        "-d", "--detach", "--rm", "-T", "--no-TTY", "--no-deps", "--service-ports", "-P", "-i", "--interactive", "-t",
        "--tty", "--build", "--remove-orphans", "--quiet-pull",
    ], Value::Flag),
    (&["--name", "-u", "--user", "-w", "--workdir", "-p", "--publish", "--entrypoint", "-l", "--label"], Value::Data),
    (&["-e", "--env"], Value::Env),
    (&["-v", "--volume"], Value::Volume),
];

#[rustfmt::skip]
const COMPOSE_EXEC: Options = &[
    (&["-d", "--detach", "-T", "--no-TTY", "-i", "--interactive", "-t", "--tty"], Value::Flag),
    (&["-u", "--user", "-w", "--workdir", "--index"], Value::Data),
    (&["-e", "--env"], Value::Env),
];

const COMPOSE_PULL: Options = &[(
    &["-q", "--quiet", "--ignore-pull-failures", "--include-deps"],
    Value::Flag,
)];

/// `docker compose` and `docker-compose`.
#[rustfmt::skip]
const COMPOSE: &[Level] = &[
    Level { path: &["up"], options: COMPOSE_UP, operands: Operands::Data },
    Level { path: &["down"], options: COMPOSE_DOWN, operands: Operands::Data },
    Level { path: &["ps"], options: COMPOSE_PS, operands: Operands::Data },
    Level { path: &["logs"], options: COMPOSE_LOGS, operands: Operands::Data },
    Level { path: &["build"], options: COMPOSE_BUILD, operands: Operands::Data },
    Level { path: &["run"], options: COMPOSE_RUN, operands: Operands::Command },
    Level { path: &["exec"], options: COMPOSE_EXEC, operands: Operands::Command },
    Level { path: &["pull"], options: COMPOSE_PULL, operands: Operands::Data },
    Level { path: &["stop"], options: STOP, operands: Operands::Data },
    Level { path: &["restart"], options: STOP, operands: Operands::Data },
    Level { path: &["start"], options: &[], operands: Operands::Data },
];

#[rustfmt::skip]
const KUBECTL_GLOBAL: Options = &[
    (&["--insecure-skip-tls-verify"], Value::Flag),
    (&[
        "-n", "--namespace", "--context", "--cluster", "--user", "-s", "--server", "--request-timeout", "-v", "--v",
        "--as",
    ], Value::Data),
    (&["--kubeconfig"], Value::Read),
];

#[rustfmt::skip]
const KUBECTL_GET: Options = &[
    (&[
        "-A", "--all-namespaces", "-w", "--watch", "--show-labels", "--no-headers", "--ignore-not-found", "-R",
        "--recursive",
    ], Value::Flag),
    (&[
        "-l", "--selector", "--field-selector", "--sort-by", "--raw", "-L", "--label-columns", "--chunk-size",
    ], Value::Data),
    (&["-o", "--output"], Value::KubeOutput),
    (&["-f", "--filename", "-k", "--kustomize"], Value::Read),
];

#[rustfmt::skip]
const KUBECTL_DESCRIBE: Options = &[
    (&["-A", "--all-namespaces", "-R", "--recursive"], Value::Flag),
    (&["-l", "--selector", "--show-events"], Value::Data),
    (&["-f", "--filename"], Value::Read),
];

#[rustfmt::skip]
const KUBECTL_LOGS: Options = &[
    (&["-f", "--follow", "-p", "--previous", "--timestamps", "--all-containers", "--prefix"], Value::Flag),
    (&[
        "-c", "--container", "--tail", "--since", "--since-time", "-l", "--selector", "--max-log-requests",
    ], Value::Data),
];

#[rustfmt::skip]
const KUBECTL_APPLY: Options = &[
    (&["-R", "--recursive", "--server-side", "--force-conflicts", "--wait"], Value::Flag),
    (&["--dry-run", "--field-manager", "-l", "--selector"], Value::Data),
    (&["-o", "--output"], Value::KubeOutput),
    (&["-f", "--filename", "-k", "--kustomize"], Value::Read),
];

#[rustfmt::skip]
const KUBECTL_DELETE: Options = &[
    (&["--all", "--force", "--ignore-not-found", "--now", "-R", "--recursive"], Value::Flag),
    (&["-l", "--selector", "--grace-period", "--wait", "--timeout", "--field-selector"], Value::Data),
    (&["-f", "--filename", "-k", "--kustomize"], Value::Read),
];

#[rustfmt::skip]
const KUBECTL_ROLLOUT: Options = &[
    (&["-w", "--watch"], Value::Flag),
    (&["--timeout", "--revision"], Value::Data),
];

#[rustfmt::skip]
const KUBECTL_TOP: Options = &[
    (&["--containers", "-A", "--all-namespaces", "--no-headers"], Value::Flag),
    (&["-l", "--selector", "--sort-by"], Value::Data),
];

#[rustfmt::skip]
const KUBECTL_CONFIG: Options = &[
    (&["--no-headers"], Value::Flag),
    (&["-o", "--output"], Value::Data),
];

/// `kubectl`.
#[rustfmt::skip]
const KUBECTL: &[Level] = &[
    Level { path: &["get"], options: KUBECTL_GET, operands: Operands::Data },
    Level { path: &["describe"], options: KUBECTL_DESCRIBE, operands: Operands::Data },
    Level { path: &["logs"], options: KUBECTL_LOGS, operands: Operands::Data },
    Level { path: &["apply"], options: KUBECTL_APPLY, operands: Operands::Data },
    Level { path: &["delete"], options: KUBECTL_DELETE, operands: Operands::Data },
    Level { path: &["rollout", "status"], options: KUBECTL_ROLLOUT, operands: Operands::Data },
    Level { path: &["top"], options: KUBECTL_TOP, operands: Operands::Data },
    Level { path: &["config", "get-contexts"], options: KUBECTL_CONFIG, operands: Operands::Data },
    Level { path: &["config", "current-context"], options: KUBECTL_CONFIG, operands: Operands::Data },
    Level { path: &["version"], options: KUBECTL_CONFIG, operands: Operands::Data },
];

#[rustfmt::skip]
const HELM_GLOBAL: Options = &[
    (&["--debug"], Value::Flag),
    (&["--kube-context", "-n", "--namespace"], Value::Data),
    (&["--kubeconfig"], Value::Read),
];

#[rustfmt::skip]
const HELM_LIST: Options = &[
    (&["-a", "--all", "-A", "--all-namespaces", "-q", "--short", "-r", "--reverse", "-d", "--date"], Value::Flag),
    (&["-o", "--output", "-f", "--filter", "-l", "--selector"], Value::Data),
];

#[rustfmt::skip]
const HELM_STATUS: Options = &[
    (&["--show-desc"], Value::Flag),
    (&["-o", "--output", "--revision"], Value::Data),
];

#[rustfmt::skip]
const HELM_INSTALL: Options = &[
    (&[
        "--create-namespace", "--wait", "--atomic", "-i", "--install", "--reuse-values", "--reset-values", "--force",
    ], Value::Flag),
    (&[
        "--set", "--set-string", "--version", "--timeout", "--dry-run", "--description", "-o", "--output",
    ], Value::Data),
    (&["-f", "--values"], Value::Read),
    (&["--set-file"], Value::SetFile),
];

/// `helm`.
#[rustfmt::skip]
const HELM: &[Level] = &[
    Level { path: &["list"], options: HELM_LIST, operands: Operands::Data },
    Level { path: &["ls"], options: HELM_LIST, operands: Operands::Data },
    Level { path: &["status"], options: HELM_STATUS, operands: Operands::Data },
    Level { path: &["install"], options: HELM_INSTALL, operands: Operands::Chart },
    Level { path: &["upgrade"], options: HELM_INSTALL, operands: Operands::Chart },
    Level { path: &["version"], options: &[], operands: Operands::Data },
];

const TERRAFORM_GLOBAL: Options = &[(&["-chdir"], Value::Read)];

#[rustfmt::skip]
const TERRAFORM_INIT: Options = &[
    (&["-upgrade", "-reconfigure", "-migrate-state", "-no-color"], Value::Flag),
    (&["-input", "-backend", "-get", "-lock", "-lock-timeout"], Value::Data),
    (&["-backend-config"], Value::BackendConfig),
];

#[rustfmt::skip]
const TERRAFORM_PLAN: Options = &[
    (&[
        "-destroy", "-refresh-only", "-no-color", "-detailed-exitcode", "-compact-warnings", "-auto-approve", "-json",
    ], Value::Flag),
    (&["-var", "-target", "-input", "-lock", "-lock-timeout", "-parallelism", "-refresh", "-replace"], Value::Data),
    (&["-var-file"], Value::Read),
    (&["-out"], Value::Write),
];

#[rustfmt::skip]
const TERRAFORM_SHOW: Options = &[
    (&["-json", "-no-color", "-raw"], Value::Flag),
    (&["-state"], Value::Read),
];

#[rustfmt::skip]
const TERRAFORM_FMT: Options = &[
    (&["-check", "-diff", "-recursive", "-no-color"], Value::Flag),
    (&["-write", "-list"], Value::Data),
];

/// `terraform` and `tofu`.
#[rustfmt::skip]
const TERRAFORM: &[Level] = &[
    Level { path: &["init"], options: TERRAFORM_INIT, operands: Operands::Data },
    Level { path: &["plan"], options: TERRAFORM_PLAN, operands: Operands::Data },
    Level { path: &["apply"], options: TERRAFORM_PLAN, operands: Operands::Reads },
    Level { path: &["validate"], options: TERRAFORM_SHOW, operands: Operands::Data },
    Level { path: &["fmt"], options: TERRAFORM_FMT, operands: Operands::Writes },
    Level { path: &["show"], options: TERRAFORM_SHOW, operands: Operands::Reads },
    Level { path: &["output"], options: TERRAFORM_SHOW, operands: Operands::Data },
    Level { path: &["state", "list"], options: TERRAFORM_SHOW, operands: Operands::Data },
    Level { path: &["version"], options: TERRAFORM_SHOW, operands: Operands::Data },
];

/// How a program writes its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Go's pflag: `--name[=value]`, short options in clusters, the last taking the rest or the next word.
    Pflag,
    /// Go's flag: `-name[=value]` or `--name[=value]`, no clusters.
    GoFlag,
}

/// A program's grammar.
struct Program {
    style: Style,
    global: Options,
    levels: &'static [Level],
    /// Global options are read anywhere (kubectl, helm), not only before the sub-command.
    interspersed_global: bool,
}

/// The keys of `ssh -o` that only tune the connection (case-insensitive); `IdentityFile` is a path read.
const SSH_INERT_KEYS: &[&str] = &[
    "connecttimeout",
    "connectionattempts",
    "batchmode",
    "serveraliveinterval",
    "serveralivecountmax",
    "stricthostkeychecking",
    "port",
    "user",
    "loglevel",
    "compression",
    "addressfamily",
    "passwordauthentication",
    "pubkeyauthentication",
    "preferredauthentications",
    "requesttty",
    "tcpkeepalive",
    "identitiesonly",
    "checkhostip",
    "hostname",
];

/// `ssh`'s options: flags, data, a path read.
#[rustfmt::skip]
const SSH: Options = &[
    (&["-4", "-6", "-C", "-N", "-T", "-t", "-q", "-v", "-x", "-n", "-s", "-V"], Value::Flag),
    (&["-p", "-l", "-c", "-m", "-b", "-e", "-J", "-B"], Value::Data),
    (&["-i", "-F"], Value::Read),
    (&["-E"], Value::Write),
    (&["-o"], Value::SshOption),
];

/// `scp`'s options.
#[rustfmt::skip]
const SCP: Options = &[
    (&["-4", "-6", "-3", "-B", "-C", "-O", "-p", "-q", "-r", "-T", "-v"], Value::Flag),
    (&["-P", "-l", "-c", "-J"], Value::Data),
    (&["-i", "-F"], Value::Read),
    (&["-o"], Value::SshOption),
];

/// Why the command `argv` (its command word first, a program of [`remote`]'s list) cannot run outside the
/// sandbox, or `Ok` when every word is understood; its paths are added to `c`'s reads and writes.
pub(super) fn understood(argv: &[Word], c: &mut Classified) -> Result<(), String> {
    let Some((command, args)) = argv.split_first() else {
        return Err("it names no command".to_owned());
    };
    if let Some(word) = argv.iter().find(|w| !w.literal) {
        return Err(format!(
            "the word `{}` is only known when the shell expands it",
            word.text
        ));
    }
    let name = command.text.rsplit('/').next().unwrap_or_default();
    let mut found = Classified::new();
    match name {
        "docker" | "podman" | "nerdctl" => docker(name, args, &mut found)?,
        "docker-compose" => program(name, &compose_program(), args, &mut found)?,
        "kubectl" => program(name, &KUBECTL_PROGRAM, args, &mut found)?,
        "helm" => program(name, &HELM_PROGRAM, args, &mut found)?,
        "terraform" | "tofu" => program(name, &TERRAFORM_PROGRAM, args, &mut found)?,
        "ssh" => ssh(args, &mut found)?,
        "scp" => scp(args, &mut found)?,
        "aws" | "gcloud" | "gsutil" | "az" | "doctl" => cloud(name, args, &mut found)?,
        _ => return Err(format!("the analysis has no grammar of `{name}`'s words")),
    }
    // The generic reading of a cluster's or infrastructure tool's words (every operand a path written: `kubectl
    // get --raw /api`, `helm --set-file k=F`) gives way to the grammar's, which knows what each word is.
    if matches!(name, "kubectl" | "helm" | "terraform" | "tofu") {
        c.reads.clear();
        c.writes.clear();
    }
    merge(found, c);
    Ok(())
}

/// Adds what `found` names to `c`, each path once.
fn merge(found: Classified, c: &mut Classified) {
    for (word, via) in found.reads {
        if !c.reads.iter().any(|(w, _)| w.text == word.text) {
            c.read(&word, via);
        }
    }
    for (word, via) in found.writes {
        if !c.writes.iter().any(|(w, _)| w.text == word.text) {
            c.write(&word, via);
        }
    }
    if found.recursive == Recursion::All {
        c.recursive = Recursion::All;
    }
    c.findings.extend(found.findings);
    for name in found.host_env {
        if !c.host_env.contains(&name) {
            c.host_env.push(name);
        }
    }
}

const KUBECTL_PROGRAM: Program = Program {
    style: Style::Pflag,
    global: KUBECTL_GLOBAL,
    levels: KUBECTL,
    interspersed_global: true,
};

const HELM_PROGRAM: Program = Program {
    style: Style::Pflag,
    global: HELM_GLOBAL,
    levels: HELM,
    interspersed_global: true,
};

const TERRAFORM_PROGRAM: Program = Program {
    style: Style::GoFlag,
    global: TERRAFORM_GLOBAL,
    levels: TERRAFORM,
    interspersed_global: false,
};

fn compose_program() -> Program {
    Program {
        style: Style::Pflag,
        global: COMPOSE_GLOBAL,
        levels: COMPOSE,
        interspersed_global: false,
    }
}

/// `docker [GLOBAL] [container|image|builder] SUB …` and `docker compose …`.
fn docker(name: &str, args: &[Word], c: &mut Classified) -> Result<(), String> {
    let (at, _) = options(name, Style::Pflag, args, &[DOCKER_GLOBAL, HELP], false, c)?;
    let rest = args.get(at..).unwrap_or_default();
    let rest = match rest.first().map(|w| w.text.as_str()) {
        Some("container" | "image") => rest.get(1..).unwrap_or_default(),
        Some("compose") => return program(name, &compose_program(), rest.get(1..).unwrap_or_default(), c),
        _ => rest,
    };
    levels(name, Style::Pflag, DOCKER, &[], rest, c)
}

/// A program with global options, then a sub-command of `program.levels`.
fn program(name: &str, program: &Program, args: &[Word], c: &mut Classified) -> Result<(), String> {
    let (at, _) = options(name, program.style, args, &[program.global, HELP], false, c)?;
    let global: &[Options] = if program.interspersed_global {
        &[program.global]
    } else {
        &[]
    };
    levels(
        name,
        program.style,
        program.levels,
        global,
        args.get(at..).unwrap_or_default(),
        c,
    )
}

/// The sub-command `args` starts with, among `levels`, and its options and operands.
fn levels(
    name: &str,
    style: Style,
    levels: &[Level],
    global: &[Options],
    args: &[Word],
    c: &mut Classified,
) -> Result<(), String> {
    let level = levels
        .iter()
        .filter(|l| l.path.len() <= args.len() && l.path.iter().zip(args).all(|(p, w)| *p == w.text))
        .max_by_key(|l| l.path.len())
        .ok_or_else(|| match args.first() {
            Some(sub) => format!("the analysis has no grammar of `{name} {}`", sub.text),
            None => format!("the analysis has no grammar of `{name}` without a sub-command"),
        })?;
    let shown = format!("{name} {}", level.path.join(" "));
    let rest = args.get(level.path.len()..).unwrap_or_default();
    let mut tables: Vec<Options> = vec![level.options, HELP];
    tables.extend_from_slice(global);
    let stop_at_operand = level.operands == Operands::Command;
    let (_, operands) = options(&shown, style, rest, &tables, !stop_at_operand, c)?;
    match level.operands {
        Operands::Data | Operands::Command => {}
        Operands::Context => {
            if let Some(context) = operands
                .first()
                .filter(|w| !w.text.contains("://") && w.text != "-")
            {
                c.read(context, AccessVia::Operand);
                c.recursive = Recursion::All;
            }
        }
        Operands::Reads => operands.iter().for_each(|w| c.read(w, AccessVia::Operand)),
        Operands::Writes => operands.iter().for_each(|w| c.write(w, AccessVia::Operand)),
        Operands::Chart => {
            if let Some(chart) = operands.get(1).filter(|w| looks_like_path(&w.text)) {
                c.read(chart, AccessVia::Operand);
                c.recursive = Recursion::All;
            }
        }
    }
    Ok(())
}

/// Reads the options of `args` against `tables` (the first naming an option wins), acting on each value; the
/// index where reading stopped and the operands seen. `interspersed`: options may follow operands; else the
/// first operand ends them (and is the last operand returned).
fn options<'a>(
    shown: &str,
    style: Style,
    args: &'a [Word],
    tables: &[Options],
    interspersed: bool,
    c: &mut Classified,
) -> Result<(usize, Vec<&'a Word>), String> {
    let lookup = |name: &str| {
        tables
            .iter()
            .find_map(|t| t.iter().find(|(names, _)| names.contains(&name)).map(|(_, v)| *v))
    };
    let unknown = |name: &str| format!("the option `{name}` of `{shown}` is not one the analysis knows");
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = word.text.as_str();
        i += 1;
        if text == "--" {
            operands.extend(args.get(i..).unwrap_or_default());
            return Ok((args.len(), operands));
        }
        if !text.starts_with('-') || text == "-" {
            operands.push(word);
            if !interspersed {
                return Ok((i - 1, operands));
            }
            continue;
        }
        let long = match style {
            Style::Pflag => text.strip_prefix("--").map(|n| format!("--{n}")),
            Style::GoFlag => Some(format!("-{}", text.trim_start_matches('-'))),
        };
        if let Some(long) = long {
            let (name, attached) = match long.split_once('=') {
                Some((name, _)) => {
                    let prefix = text
                        .get(..text.find('=').unwrap_or_default() + 1)
                        .unwrap_or_default();
                    (name.to_owned(), Some(word.after(prefix)))
                }
                None => (long.clone(), None),
            };
            let kind = lookup(&name).ok_or_else(|| unknown(&name))?;
            if kind == Value::Flag {
                continue;
            }
            let value = match attached {
                Some(value) => value,
                None => {
                    let value = args
                        .get(i)
                        .cloned()
                        .ok_or_else(|| format!("`{name}` of `{shown}` has no value"))?;
                    i += 1;
                    value
                }
            };
            act(&name, kind, &value, c)?;
            continue;
        }
        // A cluster of short options.
        let letters = text.get(1..).unwrap_or_default();
        for (at, letter) in letters.char_indices() {
            let name = format!("-{letter}");
            let kind = lookup(&name).ok_or_else(|| unknown(&name))?;
            if kind == Value::Flag {
                continue;
            }
            let rest = letters.get(at + letter.len_utf8()..).unwrap_or_default();
            let value = if rest.is_empty() {
                let value = args
                    .get(i)
                    .cloned()
                    .ok_or_else(|| format!("`{name}` of `{shown}` has no value"))?;
                i += 1;
                value
            } else {
                let prefix = text.get(..text.len() - rest.len()).unwrap_or_default();
                let attached = word.after(prefix);
                if attached.text.starts_with('=') {
                    attached.after("=")
                } else {
                    attached
                }
            };
            act(&name, kind, &value, c)?;
            break;
        }
    }
    Ok((args.len(), operands))
}

/// Acts on the value of option `name` of kind `kind`.
fn act(name: &str, kind: Value, value: &Word, c: &mut Classified) -> Result<(), String> {
    let text = value.text.as_str();
    match kind {
        Value::Flag | Value::Data => {}
        Value::Read => c.read(value, AccessVia::Flag),
        Value::Write => c.write(value, AccessVia::Flag),
        Value::Env => match text.split_once('=') {
            Some(_) => {}
            None if is_name(text) => c.host_env.push(text.to_owned()),
            None => return Err(format!("`{name} {text}` names no variable the analysis can read")),
        },
        Value::Volume => container::volume(value, c),
        Value::Mount => container::mount(value, c),
        Value::Secret => container::build_secret(value, c),
        Value::Context => match text.split_once('=') {
            Some((_, source)) if source.contains("://") => {}
            Some((_, source)) => {
                c.read(&path_word(source), AccessVia::Flag);
                c.recursive = Recursion::All;
            }
            None => return Err(format!("`{name} {text}` is not `NAME=PATH`")),
        },
        Value::VolumeOpt => {
            if let Some((key, device)) = text.split_once('=')
                && key.eq_ignore_ascii_case("device")
            {
                container::mounted(device, false, c);
            }
        }
        Value::SshOption => ssh_option(text, c)?,
        Value::KubeOutput => {
            if let Some((format, file)) = text.split_once('=')
                && format.ends_with("-file")
            {
                c.read(&path_word(file), AccessVia::Flag);
            }
        }
        Value::SetFile => {
            for pair in text.split(',') {
                match pair.split_once('=') {
                    Some((_, file)) => c.read(&path_word(file), AccessVia::Flag),
                    None => return Err(format!("`{name} {text}` is not `KEY=FILE`")),
                }
            }
        }
        Value::BackendConfig => {
            if !text.contains('=') {
                c.read(value, AccessVia::Flag);
            }
        }
    }
    Ok(())
}

/// Whether `text` is a variable name.
fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `ssh -o KEY=VALUE` (or `KEY VALUE`): only keys that tune the connection; `IdentityFile` is a path read.
fn ssh_option(text: &str, c: &mut Classified) -> Result<(), String> {
    let (key, value) = text
        .split_once(['=', ' ', '\t'])
        .map(|(k, v)| (k.trim(), v.trim().trim_start_matches('=').trim()))
        .unwrap_or((text, ""));
    let lower = key.to_ascii_lowercase();
    if lower == "identityfile" {
        c.read(&path_word(value), AccessVia::Flag);
        return Ok(());
    }
    if SSH_INERT_KEYS.contains(&lower.as_str()) {
        return Ok(());
    }
    Err(format!(
        "the ssh option `{key}` is not one the analysis knows to only tune the connection"
    ))
}

/// `ssh [OPTIONS] HOST [OPTIONS] [COMMAND…]`: OpenSSH reads options again after the host; the command runs there.
fn ssh(args: &[Word], c: &mut Classified) -> Result<(), String> {
    let (at, operands) = options("ssh", Style::Pflag, args, &[SSH], false, c)?;
    if operands.is_empty() {
        return Ok(());
    }
    options(
        "ssh",
        Style::Pflag,
        args.get(at + 1..).unwrap_or_default(),
        &[SSH],
        false,
        c,
    )?;
    Ok(())
}

/// `scp [OPTIONS] SOURCE… TARGET`: the operands on this machine are read, the target written.
fn scp(args: &[Word], c: &mut Classified) -> Result<(), String> {
    let (_, operands) = options("scp", Style::Pflag, args, &[SCP], true, c)?;
    copies(&operands, |w| !remote::names_host(&w.text), c);
    Ok(())
}

/// Copies between this machine and another place: `local` tells the operands on this machine; the last is
/// written, the others read (`-` is standard input or output).
fn copies(operands: &[&Word], local: impl Fn(&Word) -> bool, c: &mut Classified) {
    let last = operands.len().saturating_sub(1);
    for (index, word) in operands.iter().enumerate() {
        if word.text == "-" || !local(word) {
            continue;
        }
        if index == last && index > 0 {
            c.write(word, AccessVia::Operand);
        } else {
            c.read(word, AccessVia::Operand);
        }
    }
}

/// Whether a word looks like a place on this machine: `~`, `/`, `./`, `../` first, or `file://`/`fileb://`.
fn looks_like_path(text: &str) -> bool {
    text == "~"
        || text == "."
        || text == ".."
        || text.starts_with(['/', '~'])
        || text.starts_with("./")
        || text.starts_with("../")
}
