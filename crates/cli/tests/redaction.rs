//! Secrets recognised by their content, end to end: project files with realistic credentials under ordinary names
//! make `Read` and `cat` ask, and what a sandboxed command prints of them arrives redacted; binary output passes
//! byte for byte but for the credentials in it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

#[path = "../../../tests/support/need.rs"]
mod need;

const BIN: &str = env!("CARGO_BIN_EXE_agent-guard");

const GITHUB_TOKEN: &str = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";
const STRIPE_KEY: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dc9Xk2";
const DB_PASSWORD: &str = "Qv7#mK2pLx9!wR4t";

/// A scratch home and a project holding credentials in `config/settings.yml`, `deploy/values.yaml` and
/// `notes.txt`.
struct Project {
    _dir: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let root = dir.path().join("project");
        for sub in [home.clone(), root.join("config"), root.join("deploy")] {
            std::fs::create_dir_all(sub).unwrap();
        }
        std::fs::write(
            root.join("config/settings.yml"),
            format!("database:\n  host: db.internal\n  user: app\n  password: {DB_PASSWORD}\n"),
        )
        .unwrap();
        std::fs::write(
            root.join("deploy/values.yaml"),
            format!("image: app:1.4\nenv:\n  STRIPE_KEY: {STRIPE_KEY}\n"),
        )
        .unwrap();
        std::fs::write(
            root.join("notes.txt"),
            format!("release checklist\nci token {GITHUB_TOKEN} (rotate in May)\n"),
        )
        .unwrap();
        std::fs::write(
            root.join("README.md"),
            "# app\nSet `password: changeme` locally.\n",
        )
        .unwrap();
        Self {
            _dir: dir,
            home,
            root,
        }
    }

    fn check(&self, tool: &str, input: &Value) -> Value {
        let hook = json!({"session_id": "s", "cwd": self.root, "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": input});
        let mut child = Command::new(BIN)
            .arg("check")
            .env("HOME", &self.home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(hook.to_string().as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success());
        serde_json::from_slice(&output.stdout).unwrap()
    }

    /// `line` run by bash in the sandbox, read-only.
    fn bash(&self, line: &str) -> Output {
        self.sandbox(&["--", "bash", "-c", line])
    }

    /// `line` run by bash in the sandbox, writing the project.
    fn bash_writing(&self, line: &str) -> Output {
        self.sandbox(&["--profile", "workspace-write", "--", "bash", "-c", line])
    }

    fn sandbox(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .arg("sandbox")
            .args(args)
            .current_dir(&self.root)
            .env("HOME", &self.home)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

/// Whether the kernel enforces the sandbox here; where it does not, the test says it is skipped, or fails under
/// `AGENT_GUARD_REQUIRE_SANDBOX=1`.
fn sandbox_supported() -> bool {
    need::sandbox_report(BIN).is_some()
}

fn decision(decided: &Value) -> &str {
    decided["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("")
}

#[test]
fn reading_a_file_that_holds_a_credential_asks_and_the_reason_names_the_kind() {
    let project = Project::new();
    for (file, kind) in [
        ("config/settings.yml", "password or secret assignment"),
        ("deploy/values.yaml", "Stripe key"),
        ("notes.txt", "GitHub token"),
    ] {
        let absolute = project.root.join(file);
        for (tool, input) in [
            ("Read", json!({"file_path": absolute})),
            ("Bash", json!({"command": format!("cat {file}")})),
        ] {
            let decided = project.check(tool, &input);
            assert_eq!(decision(&decided), "ask", "{tool} {input}: {decided}");
            let text = decided.to_string();
            assert!(text.contains(kind), "{tool} {input}: {decided}");
            for value in [GITHUB_TOKEN, STRIPE_KEY, DB_PASSWORD] {
                assert!(!text.contains(value), "the reason quotes the value: {decided}");
            }
        }
    }
    let readme = project.root.join("README.md");
    let decided = project.check("Read", &json!({"file_path": readme}));
    assert_eq!(
        decision(&decided),
        "allow",
        "a placeholder is no credential: {decided}"
    );
}

#[test]
fn a_sandboxed_command_prints_credentials_redacted_and_keeps_its_status() {
    if !sandbox_supported() {
        return;
    }
    let project = Project::new();
    let output = project.sandbox(&["--", "cat", "notes.txt"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout,
        "release checklist\nci token [redacted: GitHub token] (rotate in May)\n",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success());

    let output = project.bash("grep -r -e password -e STRIPE . >&2; exit 3");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("password: [redacted: password or secret assignment]"),
        "{stderr}"
    );
    assert!(stderr.contains("[redacted: Stripe key]"), "{stderr}");
    assert!(stderr.contains("`password: changeme`"), "{stderr}");
    for value in [STRIPE_KEY, DB_PASSWORD] {
        assert!(!stderr.contains(value), "{stderr}");
    }
}

#[test]
fn binary_output_passes_byte_for_byte_but_for_its_credentials() {
    if !sandbox_supported() {
        return;
    }
    let project = Project::new();
    let mut bytes: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    bytes[0] = 0;
    let path: &Path = &project.root.join("blob.bin");
    std::fs::write(path, &bytes).unwrap();
    let output = project.sandbox(&["--", "cat", "blob.bin"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stdout == bytes,
        "{} bytes out of {}",
        output.stdout.len(),
        bytes.len()
    );
    // A NUL byte printed first does not turn the scan off: the token inside is redacted, the rest passes. (The
    // command prints it between two pieces of the file: a file that holds it is not read at all, below.)
    let (head, tail) = GITHUB_TOKEN.split_at(12);
    let script = format!("head -c 1000 blob.bin; printf '\\n%s%s\\n' {head} {tail}; tail -c +1001 blob.bin");
    bytes.splice(1000..1000, format!("\n{GITHUB_TOKEN}\n").bytes());
    let output = project.sandbox(&["--", "bash", "-c", &script]);
    assert!(output.status.success());
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(!shown.contains(GITHUB_TOKEN), "the token passed");
    assert!(shown.contains("[redacted: GitHub token]"));
    assert_eq!(output.stdout.get(..1000), bytes.get(..1000));
    // A file of more than a mebibyte whose first mebibyte holds a credential is hidden whole: no view of it is
    // scanned whole.
    std::fs::write(path, &bytes).unwrap();
    let output = project.sandbox(&["--", "cat", "blob.bin"]);
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
}

/// Reads `stdout` on a thread of its own, so that the test can wait for a piece with a deadline.
fn reader(mut stdout: std::process::ChildStdout) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        loop {
            match std::io::Read::read(&mut stdout, &mut buffer) {
                Ok(0) | Err(_) => return,
                Ok(read) => {
                    if sender.send(buffer[..read].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    receiver
}

/// What `pieces` has brought once it ends with `expected`, polled until a deadline.
fn wait_for(pieces: &std::sync::mpsc::Receiver<Vec<u8>>, seen: &mut Vec<u8>, expected: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !seen.ends_with(expected.as_bytes()) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match pieces.recv_timeout(left) {
            Ok(piece) => seen.extend(piece),
            Err(_) => panic!(
                "`{expected}` did not arrive; so far: {}",
                String::from_utf8_lossy(seen)
            ),
        }
    }
}

#[test]
fn an_interactive_commands_lines_and_prompt_show_while_it_waits() {
    if !sandbox_supported() {
        return;
    }
    // Each line is written as it is printed, and a prompt without a line end shows while the command waits for
    // its answer: nothing waits for more output to fill a read.
    let project = Project::new();
    let mut child = Command::new(BIN)
        .args([
            "sandbox",
            "--",
            "sh",
            "-c",
            "echo ready; printf 'name? '; read name; echo \"hello $name\"; read key; echo \"key=$key\"",
        ])
        .current_dir(&project.root)
        .env("HOME", &project.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pieces = reader(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = Vec::new();
    wait_for(&pieces, &mut seen, "ready\nname? ");
    writeln!(stdin, "bob").unwrap();
    wait_for(&pieces, &mut seen, "hello bob\n");
    // A credential typed in comes back redacted, at once.
    writeln!(stdin, "{GITHUB_TOKEN}").unwrap();
    wait_for(&pieces, &mut seen, "key=[redacted: GitHub token]\n");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_credential_split_between_stdout_and_stderr_is_redacted_on_both() {
    if !sandbox_supported() {
        return;
    }
    // The agent sees the two streams joined: a token begun on stdout and ended on stderr, and a key whose lines
    // alternate between them, are whole there. The pauses let each piece arrive before the next is printed.
    let project = Project::new();
    let (head, tail) = GITHUB_TOKEN.split_at(12);
    let key = [
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "QyNTUxOQAAACAy86j+kTDgMVcmU6KEMI/YJP1aI4w5IRtgLAvTHcMixAAAAIgHiXtaB4l7",
        "/VojjDkhG2AsC9MdwyLEAAAAC3NzaC1lZDI1NTE5AAAAIDLzqP6RMOAxVyZTooQwj9gk",
        "-----END OPENSSH PRIVATE KEY-----",
    ];
    let mut script = format!("printf 'ci {head}'; sleep 0.2; printf '{tail} done\\n' >&2; sleep 0.2; ");
    for (at, line) in key.iter().enumerate() {
        let to = if at % 2 == 0 { "" } else { " >&2" };
        script.push_str(&format!("printf '%s\\n' '{line}'{to}; sleep 0.2; "));
    }
    script.push_str("echo after");
    let output = project.sandbox(&["--", "sh", "-c", &script]);
    assert!(output.status.success());
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    let both = format!("{stdout}{stderr}");
    for piece in GITHUB_TOKEN.as_bytes().windows(8) {
        let piece = std::str::from_utf8(piece).unwrap();
        assert!(!both.contains(piece), "{stdout:?} {stderr:?}");
    }
    for line in &key[1..4] {
        assert!(!both.contains(&line[..20]), "{stdout:?} {stderr:?}");
    }
    assert!(stdout.starts_with("ci [redacted: GitHub token]"), "{stdout:?}");
    assert!(
        stderr.starts_with("[redacted: GitHub token] done\n"),
        "{stderr:?}"
    );
    assert!(both.contains("[redacted: private key]"), "{stdout:?} {stderr:?}");
    assert!(stdout.ends_with("after\n"), "{stdout:?}");

    // The rest of the token and more of stdout printed at once: both pipes are ready when the pump looks, and
    // their order is not known; the order that makes the token whole is taken.
    let script = format!("printf 'ci {head}'; sleep 0.2; printf '{tail} done\n' >&2; echo after");
    let output = project.sandbox(&["--", "sh", "-c", &script]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(stdout, "ci [redacted: GitHub token]after\n", "{stderr}");
    assert_eq!(stderr, "[redacted: GitHub token] done\n");

    // A token continued on its own stream after a line of the other: stdout alone shows it whole.
    let script = format!("printf 'ci {head}'; printf 'warning\\n' >&2; printf '{tail} done\\n'");
    let output = project.sandbox(&["--", "sh", "-c", &script]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(stdout, "ci [redacted: GitHub token] done\n", "{stderr}");
    assert_eq!(stderr, "warning\n");
}

#[test]
fn grep_over_keys_and_yaml_blocks_prints_them_redacted_and_a_credential_past_the_first_mebibyte_asks() {
    let project = Project::new();
    let key = "-----BEGIN OPENSSH PRIVATE KEY-----\n\
        b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n\
        QyNTUxOQAAACAy86j+kTDgMVcmU6KEMI/YJP1aI4w5IRtgLAvTHcMixAAAAIgHiXtaB4l7\n\
        -----END OPENSSH PRIVATE KEY-----\n";
    std::fs::create_dir_all(project.root.join("handover")).unwrap();
    std::fs::write(project.root.join("handover/ci_bot"), key).unwrap();
    std::fs::write(
        project.root.join("config/app.yaml"),
        format!("db:\n  password: |\n    {DB_PASSWORD}\n  user: app\n"),
    )
    .unwrap();
    // A read of either asks, by content (a key under a name the sandbox's list of secret files does not know).
    for file in ["handover/ci_bot", "config/app.yaml"] {
        let decided = project.check("Read", &json!({"file_path": project.root.join(file)}));
        assert_eq!(decision(&decided), "ask", "{file}: {decided}");
    }
    // A credential far past the first mebibyte of a log.
    let mut log = "compiling a crate of the workspace\n".repeat(100_000);
    log.push_str(&format!("ci token {GITHUB_TOKEN}\n"));
    std::fs::write(project.root.join("build.log"), &log).unwrap();
    let decided = project.check("Read", &json!({"file_path": project.root.join("build.log")}));
    assert_eq!(decision(&decided), "ask", "{decided}");
    assert!(decided.to_string().contains("GitHub token"), "{decided}");

    if !sandbox_supported() {
        return;
    }
    let output = project.sandbox(&["--", "grep", "-r", ".", "handover/", "config/app.yaml"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for secret in ["b3BlbnNzaC1rZXkt", "QyNTUxOQAAACAy86j", DB_PASSWORD] {
        assert!(!stdout.contains(secret), "{stdout}");
    }
    assert!(
        stdout.contains("handover/ci_bot:[redacted: private key]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("config/app.yaml:    [redacted: password or secret assignment]"),
        "{stdout}"
    );
    assert!(stdout.contains("config/app.yaml:  user: app"), "{stdout}");
}

/// Reverses each line of `text`, as `rev` does.
fn reversed_lines(text: &str) -> String {
    text.lines()
        .map(|line| format!("{}\n", line.chars().rev().collect::<String>()))
        .collect()
}

#[test]
fn inside_the_sandbox_a_file_that_holds_a_credential_reads_as_its_view_whatever_the_command_does_with_it() {
    if !sandbox_supported() {
        return;
    }
    let project = Project::new();
    let view = "release checklist\nci token [redacted: GitHub token] (rotate in May)\n";
    // Transformed, a credential would pass the redaction of what the command prints: the command never reads it.
    let output = project.sandbox(&["--", "rev", "notes.txt"]);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        reversed_lines(view),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = project.bash("od -An -c notes.txt | tr -d ' \\n'");
    let letters = String::from_utf8_lossy(&output.stdout);
    assert!(letters.contains("[redacted:GitHubtoken]"), "{letters}");
    assert!(!letters.contains(&GITHUB_TOKEN[4..20]), "{letters}");
    // Hidden in a stream of bytes no rule reads: each file's bytes as numbers.
    let output = project.bash(
        "for f in notes.txt config/settings.yml deploy/values.yaml README.md; do od -An -tu1 -v \"$f\"; done",
    );
    let bytes: Vec<u8> = String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .map(|n| n.parse::<u8>().unwrap())
        .collect();
    let text = String::from_utf8_lossy(&bytes);
    for value in [GITHUB_TOKEN, STRIPE_KEY, DB_PASSWORD] {
        assert!(!text.contains(value), "{text}");
    }
    assert!(text.contains("STRIPE_KEY: [redacted: Stripe key]"), "{text}");
    // A file with no credential reads as it is.
    assert!(text.contains("Set `password: changeme` locally."), "{text}");

    // The view is read-only, and the file stays as it was.
    let before = std::fs::read(project.root.join("notes.txt")).unwrap();
    let output = project.bash_writing("echo x >> notes.txt");
    assert!(!output.status.success());
    assert_eq!(std::fs::read(project.root.join("notes.txt")).unwrap(), before);
}

fn git(root: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn a_file_git_holds_unchanged_reads_as_it_is_and_a_local_change_reads_as_its_view() {
    if !sandbox_supported() {
        return;
    }
    let project = Project::new();
    // A test key committed with the project: its content is in the history, which git shows anyway; a view would
    // make `git status` see a change, and a test that reads the key fail.
    let fixture = format!("key: {STRIPE_KEY}\n");
    std::fs::write(project.root.join("deploy/values.yaml"), &fixture).unwrap();
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for file in ["deploy/values.yaml", "notes.txt"] {
        std::fs::File::options()
            .write(true)
            .open(project.root.join(file))
            .unwrap()
            .set_modified(past)
            .unwrap();
    }
    git(&project.root, &["init", "-q"]);
    git(&project.root, &["add", "deploy/values.yaml", "notes.txt"]);
    git(&project.root, &["commit", "-qm", "init"]);
    // A token written into a committed file afterwards is the user's alone.
    std::fs::write(
        project.root.join("notes.txt"),
        format!("ci token {GITHUB_TOKEN}\n"),
    )
    .unwrap();

    let output = project.bash("git status --porcelain; rev deploy/values.yaml; rev notes.txt");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some(" M notes.txt"), "{stdout}");
    // The committed file is as it is (reversed, the output's redaction does not know it).
    let key_reversed: String = STRIPE_KEY.chars().rev().collect();
    assert!(stdout.contains(&key_reversed), "{stdout}");
    // The changed one is its view.
    let reversed: String = GITHUB_TOKEN.chars().rev().collect();
    assert!(!stdout.contains(&reversed), "{stdout}");
    assert!(stdout.contains("]nekot buHtiG :detcader["), "{stdout}");
}

/// A file named like a key is judged by what it holds inside the sandbox: a CA bundle reads as it is (a venv's pip
/// needs certifi's `cacert.pem` to reach the registry), a certificate with its private key as a view without the
/// key, a binary PKCS#12 file not at all. A key file a command makes is its own and stays; a `.env` it makes,
/// which programs load later, is still taken back.
#[test]
fn a_file_named_like_a_key_is_read_by_what_it_holds_and_one_a_command_makes_stays() {
    if !sandbox_supported() {
        return;
    }
    let project = Project::new();
    let certifi = project.root.join(".venv/lib/python3/site-packages/certifi");
    std::fs::create_dir_all(&certifi).unwrap();
    let cert = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2Vy\n-----END CERTIFICATE-----\n";
    let bundle = format!("# Issuer: CN=Root CA\n{cert}# Issuer: CN=Other CA\n{cert}");
    std::fs::write(certifi.join("cacert.pem"), &bundle).unwrap();
    let key = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIAbc1QjdsMpxT0iWqk3rW9v2fZp8yXnL4hRe7uJ0mKdoAoGCCqGSM49\n-----END EC PRIVATE KEY-----\n";
    std::fs::write(project.root.join("server.pem"), format!("{cert}{key}")).unwrap();
    std::fs::write(project.root.join("client.p12"), b"0\x82\x09\x71\x02\x01\x030\x82").unwrap();

    let output = project.bash("cat .venv/lib/python3/site-packages/certifi/cacert.pem; echo @@@; cat server.pem; echo @@@; cat client.p12");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let parts: Vec<&str> = stdout.split("@@@\n").collect();
    assert_eq!(parts.first().copied(), Some(bundle.as_str()), "{stdout}{stderr}");
    let view = parts.get(1).copied().unwrap_or_default();
    assert!(view.starts_with(cert), "{view}");
    assert!(view.contains("[redacted: private key]"), "{view}");
    assert!(!view.contains("MHcCAQEEIAbc1Qjd"), "{view}");
    assert_eq!(parts.get(2).copied(), Some(""), "{stdout}");
    assert!(stderr.contains("client.p12"), "{stderr}");

    // A binary file that holds a credential is hidden, not shown as a view: a view would be corrupt data to the
    // program reading it (a bytecode cache), where one it cannot open it does without.
    let cache = project.root.join("pkg/__pycache__");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(
        cache.join("auth.cpython-311.pyc"),
        [
            b"\xa7\x0d\x0d\x0a\x00\x00\x00\x00".as_slice(),
            b"password=hunter2Secret!\x00\x01".as_slice(),
        ]
        .concat(),
    )
    .unwrap();
    let output = project.sandbox(&["--", "cat", "pkg/__pycache__/auth.cpython-311.pyc"]);
    assert!(!output.status.success(), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");

    // Made by a command: a key file and a CA bundle stay, a `.env` is taken back.
    let output = project.bash_writing(
        "mkdir -p new/certifi && cp .venv/lib/python3/site-packages/certifi/cacert.pem new/certifi/ \
         && echo k > new/tls.key && echo A=1 > new/.env",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(project.root.join("new/certifi/cacert.pem")).unwrap(),
        bundle
    );
    assert_eq!(
        std::fs::read_to_string(project.root.join("new/tls.key")).unwrap(),
        "k\n"
    );
    assert!(!project.root.join("new/.env").exists(), "{stderr}");
    assert!(stderr.contains("new/.env"), "{stderr}");

    // In place of one the user had (its directory moved away and made again), a key file is taken back.
    std::fs::create_dir_all(project.root.join("certs")).unwrap();
    std::fs::write(project.root.join("certs/ca.pem"), &bundle).unwrap();
    let output = project.bash_writing(
        "mv certs certs_old && mkdir certs && echo EVIL > certs/ca.pem && echo k > certs/other.key",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!project.root.join("certs/ca.pem").exists(), "{stderr}");
    assert!(project.root.join("certs/other.key").exists(), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(project.root.join("certs_old/ca.pem")).unwrap(),
        bundle
    );
    // So is one a command made in an earlier run and moves in with its directory: its times are older than the
    // run that moves it.
    std::fs::remove_dir_all(project.root.join("certs")).unwrap();
    std::fs::rename(project.root.join("certs_old"), project.root.join("certs")).unwrap();
    let output = project.bash_writing("mkdir -p evil && echo EVIL > evil/ca.pem");
    assert!(output.status.success(), "{output:?}");
    assert!(project.root.join("evil/ca.pem").exists());
    let output = project.bash_writing("mv certs certs_old && mv evil certs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!project.root.join("certs/ca.pem").exists(), "{stderr}");
}
