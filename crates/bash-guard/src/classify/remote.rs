//! What a command does to other systems: the programs and sub-commands that change another machine (publishing a
//! package, a deploy, a container engine, a remote shell), and the hosts a network command names in its words.

use crate::word::Word;

/// Programs whose every use acts on another system, or on a service that acts as root (a container engine through
/// its socket), with why. Each acts through what only the host has (the engine's socket, a cluster's or a cloud
/// account's credentials, another machine's keys): no sandbox can contain one ([`crate::SubCommand::unconfinable`]).
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
    (&["crontab", "at", "batch", "atrm", "launchctl", "service", "systemd-run"],
     "hands commands to a service of this machine (cron, at, systemd, launchd), which runs them outside the sandbox"),
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
    "watch",
    "search",
    "--version",
    "version",
    "help",
];

/// Why the command `argv` (its effective command first) changes another system, when it does, and whether no
/// sandbox can contain it (a program of `REMOTE_PROGRAMS`; publishing and `gh` run inside one).
pub(super) fn remote(argv: &[Word]) -> Option<(String, bool)> {
    let (command, args) = argv.split_first()?;
    if !command.literal {
        return None;
    }
    let name = command.text.rsplit('/').next().unwrap_or_default();
    // `crontab -l` and `at -l` only list what the service holds.
    let lists = matches!(name, "crontab" | "at")
        && !args.is_empty()
        && args.iter().all(|a| a.literal && a.text == "-l");
    if let Some((_, why)) = REMOTE_PROGRAMS
        .iter()
        .find(|(names, _)| names.contains(&name) && !lists)
    {
        return Some((format!("`{name}` {why}"), true));
    }
    // An HTTP request that uploads or asks the server to change what it holds, to any host but this machine.
    if let Some(why) = super::upload::changes(name, args) {
        let named = hosts(argv);
        if !named.is_empty() && named.iter().all(|host| is_loopback(host)) {
            return None;
        }
        let at = if named.is_empty() {
            "a host only known at run time".to_owned()
        } else {
            named
                .iter()
                .map(|host| format!("`{host}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Some((
            format!(
                "{why} ({at}): it uploads or publishes, which changes another system (an allowed domain limits \
                 where a request goes, not what it does there)"
            ),
            false,
        ));
    }
    let operands: Vec<&str> = args
        .iter()
        .filter(|a| a.literal && !a.text.starts_with('-'))
        .map(|a| a.text.as_str())
        .collect();
    if name == "gh" {
        if super::network::prints_only(name, args) {
            return None;
        }
        // `gh pr view 12`, `gh run list`: the verb follows the group; `gh api PATH` requests with GET unless a
        // method or a field says otherwise; everything else writes (`gh pr create`, `gh release upload`).
        let reads = match operands.as_slice() {
            [] => true,
            ["api", ..] => gh_api_gets(args),
            [only] => GH_READS.contains(only),
            [_, verb, ..] => GH_READS.contains(verb),
        };
        return (!reads).then(|| ("`gh` changes what GitHub holds".to_owned(), false));
    }
    // The publishing verb behind a runner: Yarn 2's `yarn npm publish`, Python's `python3 -m twine upload`.
    if name == "yarn" && operands.first() == Some(&"npm") {
        return remote(argv.get(1..).unwrap_or_default()).map(|(why, _)| (why, false));
    }
    if name.starts_with("python")
        && let Some(at) = args.iter().position(|a| a.literal && a.text == "-m")
    {
        return remote(args.get(at + 1..).unwrap_or_default()).map(|(why, _)| (why, false));
    }
    let (_, subs) = PUBLISHING.iter().find(|(names, _)| names.contains(&name))?;
    let phases = matches!(name, "mvn" | "mvnw" | "gradle" | "gradlew" | "dotnet");
    let published = if phases {
        operands.iter().find(|o| subs.contains(o))
    } else {
        operands.first().filter(|o| subs.contains(o))
    };
    published.map(|sub| (format!("`{name} {sub}` publishes to a package registry"), false))
}

/// Whether `gh api`'s request (`args`, the words after `gh`) is a GET: no method other than GET or HEAD (`-X`,
/// `--method`), no body (`-f`, `-F`, `--field`, `--raw-field`, `--input`), which makes it a POST unless `-X GET`
/// turns the fields into the query, no header that overrides the method, and not the `graphql` endpoint, whose
/// query may be a mutation. Short options may be bundled (`-iXDELETE`); a word only known at run time may be
/// anything.
fn gh_api_gets(args: &[Word]) -> bool {
    let mut method: Option<String> = None;
    let mut fields = false;
    let mut operands: Vec<&str> = Vec::new();
    let mut words = args.iter();
    while let Some(w) = words.next() {
        if !w.literal {
            return false;
        }
        let text = w.text.as_str();
        let (option, inline): (&str, Option<String>) = if let Some(long) = text.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (long, None),
            }
        } else if let Some(short) = text.strip_prefix('-').filter(|s| !s.is_empty()) {
            // Flags without a value (`-i`, `--paginate`'s kin) may come first in a bundle; the first letter that
            // takes a value takes the rest of the word, or the next word.
            let Some(at) = short.find(['X', 'f', 'F', 'H', 'p', 'q', 't']) else {
                continue;
            };
            let rest = short.get(at + 1..).unwrap_or_default();
            (
                short.get(at..=at).unwrap_or_default(),
                (!rest.is_empty()).then(|| rest.to_owned()),
            )
        } else {
            operands.push(text);
            continue;
        };
        let takes_value = matches!(
            option,
            "X" | "f"
                | "F"
                | "H"
                | "p"
                | "q"
                | "t"
                | "method"
                | "field"
                | "raw-field"
                | "input"
                | "header"
                | "jq"
                | "template"
                | "preview"
                | "hostname"
                | "cache"
        );
        let value = match inline {
            Some(value) => Some(value),
            None if takes_value => words.next().map(|v| v.text.clone()),
            None => None,
        };
        match option {
            "X" | "method" => method = value,
            "f" | "F" | "field" | "raw-field" | "input" => fields = true,
            // `X-HTTP-Method-Override: DELETE`.
            "H" | "header" => {
                fields |= value.is_none_or(|h| h.to_ascii_lowercase().contains("method"));
            }
            _ => {}
        }
    }
    let gets = match method {
        Some(method) => method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD"),
        None => !fields,
    };
    gets && !operands.contains(&"graphql")
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

/// The hosts a network command (its effective command first) reaches by its words: URLs (`https://x.example/p`,
/// `--index-url=https://…`), git's `user@host:path`, and a loopback host written without a scheme
/// (`localhost:3000/health`, which curl and wget take as `http://`) or in HTTPie's shorthand (`http :3000/api`), lower
/// case, each once. A loopback host
/// carries its port (`localhost:3000`, `127.0.0.1:80`, `[::1]:8080`): it is a service on this machine, and what may
/// be granted of it is that one port. A host holding something only known at run time is not one.
pub(super) fn hosts(argv: &[Word]) -> Vec<String> {
    let (command, args) = argv.split_first().map_or((None, argv), |(c, a)| (Some(c), a));
    let name = command.map(|c| c.text.rsplit('/').next().unwrap_or_default());
    let mut hosts: Vec<String> = IMPLIED_HOSTS
        .iter()
        .filter(|(program, _)| Some(*program) == name)
        .map(|(_, host)| (*host).to_owned())
        .collect();
    for word in args {
        let shorthand = HTTPIE_CLIENTS
            .iter()
            .find(|(program, _)| Some(*program) == name)
            .and_then(|(_, scheme)| localhost_shorthand(&word.text, scheme));
        for host in shorthand.into_iter().chain(word_hosts(&word.text)) {
            if !hosts.contains(&host) {
                hosts.push(host);
            }
        }
    }
    hosts
}

/// The hosts an HTTP client's request names (`curl`, `wget`, HTTPie, `xh`), from its words as the analysis shows
/// them (`SubCommand::effective`); none for any other program. A request that changes what a server holds (`curl
/// -X PUT URL`) is a change to another system, and these are the hosts it reaches, which an allow of it grants.
pub fn request_hosts(effective: &[String]) -> Vec<String> {
    let words: Vec<Word> = effective.iter().map(|w| Word::literal(w)).collect();
    let name = effective
        .first()
        .map(|c| c.rsplit('/').next().unwrap_or_default());
    if !name.is_some_and(super::upload::is_client) {
        return Vec::new();
    }
    hosts(&words)
}

/// The clients of HTTPie's command line (HTTPie's `http` and `https`, and `xh`, `xhs`), with the scheme each
/// gives a URL written without one.
const HTTPIE_CLIENTS: &[(&str, &str)] = &[
    ("http", "http"),
    ("https", "https"),
    ("xh", "http"),
    ("xhs", "https"),
];

/// HTTPie's localhost shorthand: a URL that starts with a colon is this machine's (`:3000/api` is
/// `localhost:3000/api`, `:/api` is `localhost/api`), with the port of the client's scheme when none is written.
fn localhost_shorthand(text: &str, scheme: &str) -> Option<String> {
    let rest = text.strip_prefix(':')?;
    let spelled = if rest.starts_with(|c: char| c.is_ascii_digit()) {
        format!("localhost:{rest}")
    } else if rest.is_empty() || rest.starts_with(['/', '?', '#']) {
        format!("localhost{rest}")
    } else {
        return None;
    };
    authority_host(&spelled, scheme)
}

/// The host of the URL or git remote `text` (`https://github.com/o/r`, `git@github.com:o/r.git`,
/// `ssh://git@host:22/r`), lower case, as a network command's words name it; a loopback host with its port.
pub fn url_host(text: &str) -> Option<String> {
    word_hosts(text).into_iter().next()
}

/// Whether `host` (lower case; an IPv6 address in brackets or not; a loopback host may carry its port) names this
/// machine: `localhost` and the names below it, an IPv4 address in `127.0.0.0/8` or `0.0.0.0` in any spelling
/// the C library accepts (`127.1`, `0x7f.0.0.1`, `2130706433`), `::1`, `::` and an IPv4-mapped loopback.
pub fn is_loopback(host: &str) -> bool {
    let bare = loopback_parts(host).map_or(host, |(bare, _)| bare);
    let bare = bare.trim_end_matches('.');
    if bare == "localhost" || bare.ends_with(".localhost") {
        return true;
    }
    let unbracketed = bare.trim_start_matches('[').trim_end_matches(']');
    if let Ok(v6) = unbracketed.parse::<std::net::Ipv6Addr>() {
        return v6.is_loopback()
            || v6.is_unspecified()
            || v6
                .to_ipv4_mapped()
                .is_some_and(|v4| v4.is_loopback() || v4.is_unspecified());
    }
    inet_aton(bare).is_some_and(|v4| v4.is_loopback() || v4.is_unspecified())
}

/// `host:port` split where `host` is a loopback spelling followed by a port (`[::1]:8080` keeps its brackets).
fn loopback_parts(text: &str) -> Option<(&str, u16)> {
    let (host, port) = if text.starts_with('[') {
        let (host, rest) = text.split_at(text.find(']')? + 1);
        (host, rest.strip_prefix(':')?)
    } else {
        text.rsplit_once(':')?
    };
    Some((host, port.parse().ok()?))
}

/// An IPv4 address as `inet_aton` reads it: one to four parts, each decimal, octal (a leading `0`) or hex (`0x`),
/// the last filling the bytes that are left.
fn inet_aton(text: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut values = Vec::with_capacity(parts.len());
    for part in &parts {
        let lower = part.to_ascii_lowercase();
        let value = if let Some(hex) = lower.strip_prefix("0x") {
            u32::from_str_radix(hex, 16).ok()?
        } else if lower.len() > 1 && lower.starts_with('0') {
            u32::from_str_radix(&lower, 8).ok()?
        } else if !lower.is_empty() && lower.bytes().all(|b| b.is_ascii_digit()) {
            lower.parse().ok()?
        } else {
            return None;
        };
        values.push(value);
    }
    let (last, front) = values.split_last()?;
    let mut address: u32 = 0;
    for (i, value) in front.iter().enumerate() {
        if *value > 255 {
            return None;
        }
        address |= value << (24 - 8 * i);
    }
    let room = 32 - 8 * front.len();
    if room < 32 && u64::from(*last) >= 1u64 << room {
        return None;
    }
    Some(std::net::Ipv4Addr::from(address | last))
}

/// The hosts one word names.
fn word_hosts(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let scheme = rest.get(..at).unwrap_or_default();
        let scheme = scheme
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let after = rest.get(at + 3..).unwrap_or_default();
        if let Some(host) = authority_host(after, &scheme) {
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
    // `localhost:3000/health`: curl and wget take a word without a scheme as `http://`.
    if found.is_empty()
        && !text.starts_with('-')
        && !text.contains("://")
        && let Some(host) = authority_host(text, "http").filter(|host| is_loopback(host))
    {
        found.push(host);
    }
    found
}

/// The host of a URL's authority (`user:pw@host:port/path`); a loopback host with its port (the scheme's own
/// when none is written: 80 for `http`, 443 for `https`).
fn authority_host(after_scheme: &str, scheme: &str) -> Option<String> {
    let authority = after_scheme.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if host_port.starts_with('[') {
        let host = host_port.split_inclusive(']').next().unwrap_or(host_port);
        (
            host,
            host_port.get(host.len()..).and_then(|p| p.strip_prefix(':')),
        )
    } else {
        match host_port.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    let host = plain_host(host)?;
    if !is_loopback(&host) {
        return Some(host);
    }
    let port = match port {
        Some(port) => port.parse::<u16>().ok()?,
        None => match scheme {
            "http" | "ws" => 80,
            "https" | "wss" => 443,
            _ => return Some(host),
        },
    };
    Some(format!("{host}:{port}"))
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
            "python3 -m twine upload dist/*",
            "yarn npm publish",
            "mvn clean deploy",
            "gh pr create --fill",
            "gh api -X DELETE repos/o/r",
            "gh api repos/o/r/issues -f title=x",
            "gh api graphql -f query=x",
            "gh api -X GET graphql -f query=mutation{x}",
            "gh api -iXDELETE repos/o/r",
            "gh api -iX PUT user/starred/o/r",
            "gh api -if title=x repos/o/r/issues",
            "gh api -XGET -iXPOST repos/o/r",
            "gh api -iH X-HTTP-Method-Override:DELETE repos/o/r",
            "aws s3 ls",
        ] {
            assert!(remote(&words(line)).is_some(), "{line}");
        }
        for line in [
            "npm install",
            "yarn npm info react",
            "python3 -m pytest -q",
            "cargo build",
            "gh pr view 3",
            "gh run list",
            "gh run watch 12",
            "crontab -l",
            "gh api repos/o/r",
            "gh api -X GET search/issues -f q=x",
            "gh api -i --paginate repos/o/r/pulls -q .[].title",
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
        assert_eq!(hosts(&words("curl http://[::1]:8080/")), ["[::1]:8080"]);
        assert_eq!(hosts(&words("gh pr view 3")), ["api.github.com"]);
        assert!(hosts(&words("curl https://$HOST/x install ./local")).is_empty());
    }

    #[test]
    fn a_loopback_host_is_named_in_every_spelling_with_its_port() {
        for (line, host) in [
            ("curl localhost:3000/health", "localhost:3000"),
            ("curl -s LOCALHOST:3000", "localhost:3000"),
            ("curl http://127.0.0.1:8080/", "127.0.0.1:8080"),
            ("curl http://127.1/", "127.1:80"),
            ("curl https://localhost/", "localhost:443"),
            ("curl http://[::1]/x", "[::1]:80"),
            ("wget 0.0.0.0:9000/metrics", "0.0.0.0:9000"),
            ("curl http://0x7f000001:5000/", "0x7f000001:5000"),
            ("curl api.localhost:8000", "api.localhost:8000"),
            ("http DELETE :9200/my-index", "localhost:9200"),
            ("xh :3000", "localhost:3000"),
            ("https :/api", "localhost:443"),
            ("http POST : name=x", "localhost:80"),
        ] {
            assert_eq!(hosts(&words(line)), [host], "{line}");
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "example.com",
            "10.0.0.1",
            "[2001:db8::1]",
            "127.example.com",
            "localhost.example.com",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
        // A file name is not a host.
        assert!(hosts(&words("curl -o out.txt example.com:8080")).is_empty());
    }
}
