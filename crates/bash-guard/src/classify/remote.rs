//! What a command does to other systems: the programs and sub-commands that change another machine (publishing a
//! package, a deploy, a container engine, a remote shell), and the hosts a network command names in its words.

use crate::word::Word;

/// Programs whose every use acts on another system, or on a service that acts as root (a container engine through
/// its socket), with why.
#[rustfmt::skip]
const REMOTE_PROGRAMS: &[(&[&str], &str)] = &[
    (&["ssh", "scp", "sftp", "mosh", "rsh", "rlogin", "telnet", "ftp", "lftp", "tftp", "ssh-copy-id", "sshpass",
       "smbclient"], "runs on or copies to another host"),
    (&["nc", "ncat", "netcat", "socat", "nc.openbsd", "nc.traditional"], "opens a raw connection to another host"),
    (&["docker", "podman", "nerdctl", "docker-compose", "buildah", "lima", "colima"],
     "drives a container engine, which acts as root outside the sandbox"),
    (&["kubectl", "helm", "oc", "k9s", "kustomize", "minikube", "kind"], "acts on a Kubernetes cluster"),
    (&["terraform", "tofu", "pulumi", "ansible", "ansible-playbook", "cdk", "serverless", "sls", "packer"],
     "changes infrastructure"),
    (&["aws", "gcloud", "gsutil", "az", "doctl", "eb", "linode-cli", "hcloud"], "acts on a cloud account"),
    (&["fly", "flyctl", "vercel", "netlify", "heroku", "firebase", "wrangler", "railway", "render", "surge"],
     "deploys or manages a hosted service"),
];

/// Sub-commands of package managers and build tools that publish or change what a registry holds, with the
/// programs they belong to. For Maven and Gradle the phase or task may be any operand (`mvn clean deploy`).
#[rustfmt::skip]
const PUBLISHING: &[(&[&str], &[&str])] = &[
    (&["npm", "pnpm", "yarn", "bun"], &["publish", "unpublish", "deprecate", "dist-tag", "owner", "access", "team"]),
    (&["cargo"], &["publish", "yank", "owner"]),
    (&["twine"], &["upload", "register"]),
    (&["gem"], &["push", "yank", "owner"]),
    (&["poetry", "uv", "hatch", "flit", "pdm"], &["publish"]),
    (&["dotnet", "nuget"], &["push", "delete"]),
    (&["mvn", "mvnw", "gradle", "gradlew"], &["deploy", "publish", "release:perform"]),
];

/// Programs that reach a host of their own, whatever their words name.
const IMPLIED_HOSTS: &[(&str, &str)] = &[("gh", "api.github.com"), ("glab", "gitlab.com")];

/// The GitHub CLI's verbs that only read.
const GH_READS: &[&str] = &[
    "view",
    "list",
    "status",
    "diff",
    "checks",
    "search",
    "--version",
    "version",
    "help",
];

/// Why the command `argv` (its effective command first) changes another system, when it does.
pub(super) fn remote(argv: &[Word]) -> Option<String> {
    let (command, args) = argv.split_first()?;
    if !command.literal {
        return None;
    }
    let name = command.text.rsplit('/').next().unwrap_or_default();
    if let Some((_, why)) = REMOTE_PROGRAMS.iter().find(|(names, _)| names.contains(&name)) {
        return Some(format!("`{name}` {why}"));
    }
    let operands: Vec<&str> = args
        .iter()
        .filter(|a| a.literal && !a.text.starts_with('-'))
        .map(|a| a.text.as_str())
        .collect();
    if name == "gh" {
        // `gh pr view 12`, `gh run list`: the verb follows the group; everything else writes (`gh pr create`,
        // `gh release upload`, `gh api`).
        let reads = match operands.as_slice() {
            [] => true,
            [only] => GH_READS.contains(only),
            [group, verb, ..] => *group != "api" && GH_READS.contains(verb),
        };
        return (!reads).then(|| "`gh` changes what GitHub holds".to_owned());
    }
    let (_, subs) = PUBLISHING.iter().find(|(names, _)| names.contains(&name))?;
    let phases = matches!(name, "mvn" | "mvnw" | "gradle" | "gradlew" | "dotnet");
    let published = if phases {
        operands.iter().find(|o| subs.contains(o))
    } else {
        operands.first().filter(|o| subs.contains(o))
    };
    published.map(|sub| format!("`{name} {sub}` publishes to a package registry"))
}

/// Whether an operand of `scp` or `rsync` names a path on another machine: `host:path`, `user@host:path`,
/// `host::module` (an rsync daemon), `scp://…` or `rsync://…`. A colon after a slash is part of a local path
/// (`./a:b`), and so is a leading one.
pub(super) fn names_host(operand: &str) -> bool {
    let lower = operand.get(..8).unwrap_or(operand).to_ascii_lowercase();
    lower.starts_with("scp://")
        || lower.starts_with("rsync://")
        || operand
            .split_once(':')
            .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'))
}

/// The hosts a network command (its effective command first) reaches by its words: URLs (`https://x.example/p`, `--index-url=https://…`) and git's
/// `user@host:path`, lower case, each once. A host holding something only known at run time is not one.
pub(super) fn hosts(argv: &[Word]) -> Vec<String> {
    let (command, args) = argv.split_first().map_or((None, argv), |(c, a)| (Some(c), a));
    let name = command.map(|c| c.text.rsplit('/').next().unwrap_or_default());
    let mut hosts: Vec<String> = IMPLIED_HOSTS
        .iter()
        .filter(|(program, _)| Some(*program) == name)
        .map(|(_, host)| (*host).to_owned())
        .collect();
    for word in args {
        for host in word_hosts(&word.text) {
            if !hosts.contains(&host) {
                hosts.push(host);
            }
        }
    }
    hosts
}

/// The hosts one word names.
fn word_hosts(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let after = rest.get(at + 3..).unwrap_or_default();
        if let Some(host) = authority_host(after) {
            found.push(host);
        }
        rest = after;
    }
    if found.is_empty()
        && !text.starts_with('-')
        && let Some((user_host, path)) = text.split_once(':')
        && let Some((user, host)) = user_host.split_once('@')
        && !user.is_empty()
        && !path.starts_with("//")
        && let Some(host) = plain_host(host)
    {
        found.push(host);
    }
    found
}

/// The host of a URL's authority (`user:pw@host:port/path`).
fn authority_host(after_scheme: &str) -> Option<String> {
    let authority = after_scheme.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port.split_inclusive(']').next().unwrap_or(host_port)
    } else {
        host_port.split(':').next().unwrap_or(host_port)
    };
    plain_host(host)
}

/// `host` in lower case when it is written out (letters, digits, `-`, `.`, an address in brackets).
fn plain_host(host: &str) -> Option<String> {
    let ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'[' | b']' | b':'));
    ok.then(|| host.trim_end_matches('.').to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split_whitespace().map(Word::literal).collect()
    }

    #[test]
    fn programs_and_sub_commands_that_change_another_system() {
        for line in [
            "ssh host uptime",
            "docker run --rm alpine",
            "kubectl apply -f x.yaml",
            "terraform apply",
            "npm publish",
            "cargo publish --dry-run",
            "twine upload dist/*",
            "mvn clean deploy",
            "gh pr create --fill",
            "gh api repos/o/r",
            "aws s3 ls",
        ] {
            assert!(remote(&words(line)).is_some(), "{line}");
        }
        for line in [
            "npm install",
            "cargo build",
            "gh pr view 3",
            "gh run list",
            "mvn test",
            "make publish-docs",
        ] {
            assert_eq!(remote(&words(line)), None, "{line}");
        }
    }

    #[test]
    fn the_hosts_a_command_names() {
        assert_eq!(
            hosts(&words("curl -sSL https://Example.com/install.sh -o x")),
            ["example.com"]
        );
        assert_eq!(
            hosts(&words(
                "pip install --index-url=https://u:p@pypi.internal:8443/simple x"
            )),
            ["pypi.internal"]
        );
        assert_eq!(hosts(&words("git clone git@github.com:o/r.git")), ["github.com"]);
        assert_eq!(hosts(&words("curl http://[::1]:8080/")), ["[::1]"]);
        assert_eq!(hosts(&words("gh pr view 3")), ["api.github.com"]);
        assert!(hosts(&words("curl https://$HOST/x install ./local")).is_empty());
    }
}
