//! What a file read shows: a file of the roots whose content holds a credential, whatever its name.

use agent_fs_sandbox::PathCheck;
use agent_tool_traits::{Decision, Layer};

use super::Gathering;

impl Gathering<'_> {
    /// A read of a regular file inside a root that the sandbox allows asks when the file holds a credential,
    /// naming its kind (never its value): a secret under a name no list knows (`notes.txt`, a token in
    /// `.git/config`'s remote URL) is still a secret. A file too large to check whole (over
    /// [`agent_secrets::FILE_LIMIT`]) asks too, saying so: what it holds is not known.
    pub(super) fn content(&mut self, check: &PathCheck) {
        if check.root.is_none() || check.verdict.decision != Decision::Allow {
            return;
        }
        let path = check.resolved.as_deref().unwrap_or(&check.absolute);
        // Where nothing is at the path (kept within a batch of decisions), there is nothing to scan: most files a
        // command names that do not exist yet are answered without asking the kernel again.
        if !agent_fs_sandbox::exists_no_follow(path) {
            return;
        }
        match agent_secrets::scan_file(path) {
            agent_secrets::FileScan::Clean => {}
            agent_secrets::FileScan::Credential(kind) => {
                self.credentials.push((check.absolute.clone(), kind.to_string()));
                self.find(
                    Decision::Ask,
                    format!(
                        "`{}` holds a credential ({kind}): reading it would show it",
                        check.absolute.display()
                    ),
                    Layer::Sandbox,
                );
            }
            agent_secrets::FileScan::TooLarge => self.find(
                Decision::Ask,
                format!(
                    "`{}` is too large to check for credentials (over {} MiB): reading it may show one",
                    check.absolute.display(),
                    agent_secrets::FILE_LIMIT >> 20
                ),
                Layer::Sandbox,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_tool_traits::Verdict;
    use serde_json::{Value, json};

    use crate::bounded::CallInput;
    use crate::describe::Described;
    use crate::test_guard::Project;

    const SETTINGS_YML: &str = "database:\n  host: db.internal\n  password: Qv7#mK2pLx9!wR4t\n";
    const VALUES_YAML: &str = "image: app:1.4\nenv:\n  STRIPE_KEY: sk_live_4eC39HqLyjWDarjtT1zdp7dc9Xk2\n";
    const NOTES: &str = "todo: rotate\nghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7\n";
    const GIT_CONFIG: &str = "[remote \"origin\"]\n\turl = https://x-access-token:ghp_Zq8vN2xL5pR7tK1mW9cB4yH6jF3dG0sA8eQ2@github.com/o/r.git\n";

    fn project() -> Project {
        Project::with_files(
            "{}",
            &[
                ("proj/config/settings.yml", SETTINGS_YML),
                ("proj/deploy/values.yaml", VALUES_YAML),
                ("proj/notes.txt", NOTES),
                ("proj/.git/config", GIT_CONFIG),
                ("proj/README.md", "# app\npassword: changeme\n"),
            ],
        )
    }

    fn findings(project: &Project, tool: &str, args: &Value) -> Vec<Verdict> {
        let call = CallInput::new(tool, args.clone());
        project
            .guard
            .gather(tool, &call.args, Described::of(&call))
            .findings
    }

    fn asks_naming(findings: &[Verdict], kind: &str) -> bool {
        findings.iter().any(|f| {
            f.decision == agent_tool_traits::Decision::Ask
                && f.reason().contains("holds a credential")
                && f.reason().contains(kind)
        })
    }

    #[test]
    fn reading_a_file_that_holds_a_credential_asks_and_names_its_kind_not_its_value() {
        let project = project();
        for (file, kind) in [
            ("config/settings.yml", "password or secret assignment"),
            ("deploy/values.yaml", "Stripe key"),
            ("notes.txt", "GitHub token"),
            (".git/config", "GitHub token"),
        ] {
            for (tool, args) in [
                ("Read", json!({"file_path": file})),
                ("Grep", json!({"pattern": "x", "path": file})),
                ("Bash", json!({"command": format!("cat {file}")})),
                ("Bash", json!({"command": format!("head -n 3 {file} | wc -l")})),
            ] {
                let found = findings(&project, tool, &args);
                assert!(asks_naming(&found, kind), "{tool} {args}: {found:?}");
                assert!(
                    found
                        .iter()
                        .all(|f| !f.reason().contains("ghp_") && !f.reason().contains("sk_live")),
                    "a reason quotes the value: {found:?}"
                );
            }
        }
    }

    /// A credential a file holds gzipped is read in clear by what decompresses it (`zcat`, `tar -xzO`, `gzip
    /// -dc`), and by any other read of the file: each asks, naming the kind.
    #[test]
    fn reading_a_compressed_file_that_holds_a_credential_asks() {
        let project = project();
        // A gzip member stored without compression (deflate's stored blocks): the credential is not in the file's
        // bytes as they lie, one byte of the text before it having been moved into the block header.
        let text = NOTES.as_bytes();
        let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
        // Two stored blocks, the second final, split inside the token.
        let (first, second) = text.split_at(20);
        for (block, last) in [(first, 0_u8), (second, 1)] {
            let len = u16::try_from(block.len()).unwrap();
            gz.push(last);
            gz.extend_from_slice(&len.to_le_bytes());
            gz.extend_from_slice(&(!len).to_le_bytes());
            gz.extend_from_slice(block);
        }
        // A wrong checksum in the trailer: `zcat` prints the text all the same, and complains after it.
        gz.extend_from_slice(&[0; 8]);
        std::fs::write(project.at("creds.txt.gz"), &gz).unwrap();
        for command in [
            "zcat creds.txt.gz | rev",
            "gzip -dc creds.txt.gz | xxd -p",
            "cat creds.txt.gz",
        ] {
            let found = findings(&project, "Bash", &json!({ "command": command }));
            assert!(asks_naming(&found, "GitHub token"), "{command}: {found:?}");
        }
    }

    #[test]
    fn a_glob_that_matches_such_a_file_asks_and_a_clean_file_does_not() {
        let project = project();
        let found = findings(&project, "Bash", &json!({"command": "cat *.txt"}));
        assert!(asks_naming(&found, "GitHub token"), "{found:?}");
        for (tool, args) in [
            ("Read", json!({"file_path": "README.md"})),
            ("Bash", json!({"command": "cat README.md"})),
        ] {
            let found = findings(&project, tool, &args);
            assert!(found.is_empty(), "{tool} {args}: {found:?}");
        }
    }

    struct Searched {
        findings: Vec<Verdict>,
        search_excludes: Vec<String>,
    }

    #[test]
    fn a_search_leaves_out_the_files_that_hold_a_credential_or_asks_in_every_output_mode() {
        let project = project();
        let gathered = |args: &Value| {
            let call = CallInput::new("Grep", args.clone());
            let gathered = project.guard.gather("Grep", &call.args, Described::of(&call));
            Searched {
                findings: gathered.findings,
                search_excludes: gathered.search_excludes,
            }
        };
        // The lines of every file it reads are shown: each file holding a credential is left out by name, and the
        // clean ones stay in.
        for args in [
            json!({"pattern": "x", "output_mode": "content"}),
            json!({"pattern": "x", "path": "config", "output_mode": "content", "-C": 2}),
        ] {
            let found = gathered(&args);
            assert!(found.findings.is_empty(), "{args}: {:?}", found.findings);
            assert!(
                found.search_excludes.iter().any(|n| n == "settings.yml"),
                "{args}: {:?}",
                found.search_excludes
            );
            assert!(!found.search_excludes.iter().any(|n| n == "README.md"));
        }
        let everything = gathered(&json!({"pattern": "x", "output_mode": "content"}));
        for name in ["values.yaml", "notes.txt"] {
            assert!(
                everything.search_excludes.iter().any(|n| n == name),
                "{name}: {:?}",
                everything.search_excludes
            );
        }
        // With a glob of its own the call cannot be narrowed: it asks, naming the kind and not the value.
        let found = gathered(&json!({"pattern": "x", "glob": "*.yaml", "output_mode": "content"}));
        assert!(asks_naming(&found.findings, "Stripe key"), "{:?}", found.findings);
        assert!(found.findings.iter().all(|f| !f.reason().contains("sk_live")));
        // The tool hands ripgrep one `--glob` per part of its glob (split at blanks, and at commas outside
        // braces): each part reaches what it names.
        for glob in ["*.txt *.yml", "*.md,*.yml", "*.txt\t*.yml", "*.{md,yml}"] {
            let found = gathered(&json!({"pattern": "x", "glob": glob, "output_mode": "content"}));
            assert!(
                asks_naming(&found.findings, "password or secret assignment"),
                "{glob}: {:?}",
                found.findings
            );
        }
        // File names and counts show no line, but whether a file matched a pattern is a bit of its content: a
        // file holding a credential is left out of them too.
        for mode in [None, Some("files_with_matches"), Some("count")] {
            let mut args = json!({"pattern": "ghp_4f[A-M]", "path": "config"});
            if let Some(mode) = mode {
                args["output_mode"] = json!(mode);
            }
            let found = gathered(&args);
            assert!(found.findings.is_empty(), "{args}: {:?}", found.findings);
            assert!(
                found.search_excludes.iter().any(|n| n == "settings.yml"),
                "{args}: {:?}",
                found.search_excludes
            );
            let found = gathered(&json!({"pattern": "x", "glob": "*.txt", "output_mode": mode}));
            assert!(
                asks_naming(&found.findings, "GitHub"),
                "{mode:?}: {:?}",
                found.findings
            );
        }
    }

    #[test]
    fn a_credential_past_the_first_mebibyte_asks_and_a_file_too_large_to_check_asks_saying_so() {
        let project = project();
        let mut text = "filler line of a long log\n".repeat(2 << 20 >> 4);
        text.push_str("ci ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7\n");
        assert!(text.len() > 2 << 20);
        std::fs::write(project.at("build.log"), &text).unwrap();
        let found = findings(&project, "Read", &json!({"file_path": "build.log"}));
        assert!(asks_naming(&found, "GitHub token"), "{found:?}");
        let huge = std::fs::File::create(project.at("huge.bin")).unwrap();
        huge.set_len(agent_secrets::FILE_LIMIT + 1).unwrap();
        for (tool, args) in [
            ("Read", json!({"file_path": "huge.bin"})),
            ("Bash", json!({"command": "cat huge.bin"})),
        ] {
            let found = findings(&project, tool, &args);
            assert!(
                found
                    .iter()
                    .any(|f| f.decision == agent_tool_traits::Decision::Ask
                        && f.reason().contains("too large to check for credentials")),
                "{tool}: {found:?}"
            );
        }
    }

    #[test]
    fn writing_such_a_file_is_not_a_read() {
        let project = project();
        let found = findings(&project, "Bash", &json!({"command": "echo done > notes.txt"}));
        assert!(!asks_naming(&found, "GitHub token"), "{found:?}");
    }
}
