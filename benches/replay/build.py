#!/usr/bin/env python3
"""Builds the replay set (commands.jsonl) and its source table (sources.md) from clones of public repositories
that keep Claude Code hook logs: `logs/pre_tool_use.json`, `logs/post_tool_use.json` (hook inputs) and
`logs/chat.json` (session transcripts), at any depth and in any commit of the clone.

    python3 benches/replay/build.py CLONES_DIR OUT_DIR

CLONES_DIR holds one git directory per repository, named `owner+name` (a clone, a bare clone, or a folder with
the git directory in `repo/`). Only the standard library is used. README.md beside this file says what the
selection and the scrubbing do.
"""

import collections
import json
import os
import random
import re
import subprocess
import sys

PROJECT = "/home/user/project"
HOME = "/home/user"
LOG_NAMES = ("pre_tool_use.json", "post_tool_use.json", "chat.json")
MAX_LEN = 1000
CAP_PER_REPO = 400
VERSIONS_PER_FILE = 40

# Credentials and personal names, each replaced by an obviously fake value of the same shape.
SCRUB = [
    (r"ghp_[A-Za-z0-9]{36}", lambda m: "ghp_" + "x" * 36),
    (r"github_pat_[A-Za-z0-9_]{20,}", lambda m: "github_pat_" + "x" * (len(m.group()) - 11)),
    (r"sk-ant-[A-Za-z0-9_-]{20,}", lambda m: "sk-ant-" + "x" * (len(m.group()) - 7)),
    (r"sk-[A-Za-z0-9_-]{20,}", lambda m: "sk-" + "x" * (len(m.group()) - 3)),
    (r"xox[abpr]-[A-Za-z0-9-]{10,}", lambda m: m.group()[:5] + "x" * (len(m.group()) - 5)),
    (r"AKIA[0-9A-Z]{16}", lambda m: "AKIA" + "X" * 16),
    (r"AIza[0-9A-Za-z_-]{35}", lambda m: "AIza" + "x" * 35),
    (r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
     lambda m: "eyJ" + "x" * 20 + "." + "x" * 20 + "." + "x" * 20),
    (r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{16,}", lambda m: m.group(1) + "x" * 32),
    (r"(?i)((?:api[_-]?key|token|secret|password|passwd|pwd|auth)[A-Z_]*[=:]\s*[\"']?)[^\s\"'&|;]{6,}",
     lambda m: m.group(1) + "x" * 16),
    (r"(?<![A-Za-z0-9._%+-])(?!git@)[A-Za-z0-9._%+-]+@(?!github\.com|gitlab\.com)[A-Za-z0-9.-]+\.[a-z]{2,}",
     lambda m: "user@example.com"),
    (r"(user\.name[= ]+)(\"[^\"]*\"|'[^']*'|\S+)", lambda m: m.group(1) + '"A User"'),
    (r"\b([A-Z_]*(?:NAME|AUTHOR)=)(\"[^\"]*\"|'[^']*'|[^\s;&|]+)", lambda m: m.group(1) + '"A User"'),
    (r"(--author=?[ ]*)(\"[^\"<]*|'[^'<]*)<", lambda m: m.group(1) + m.group(2)[0] + "A User <"),
]


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True)


def git_dir(folder):
    for candidate in (os.path.join(folder, "repo"), os.path.join(folder, ".git"), folder):
        if git(candidate, "rev-parse", "HEAD").returncode == 0:
            return candidate
    return None


def entries(blob):
    """The JSON objects of a log file: an array, one object, or one object a line."""
    try:
        data = json.loads(blob)
        return data if isinstance(data, list) else [data]
    except ValueError:
        out = []
        for line in blob.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out


def bash_calls(entry):
    """(command, cwd) of each Bash call in a hook input or a transcript line."""
    if not isinstance(entry, dict):
        return
    if entry.get("tool_name") == "Bash":
        command = (entry.get("tool_input") or {}).get("command")
        if isinstance(command, str):
            yield command, entry.get("cwd")
        return
    message = entry.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        for part in message["content"]:
            if isinstance(part, dict) and part.get("type") == "tool_use" and part.get("name") == "Bash":
                command = (part.get("input") or {}).get("command")
                if isinstance(command, str):
                    yield command, entry.get("cwd")


def calls_of(repo):
    """Every distinct Bash call of every version of every log file of the repository: command -> (cwd, path)."""
    names = git(repo, "log", "--all", "--name-only", "--format=").stdout.decode(errors="replace").split("\n")
    paths = sorted({p for p in names if p.rsplit("/", 1)[-1] in LOG_NAMES and "node_modules" not in p})
    seen = {}
    for path in paths:
        commits = git(repo, "log", "--all", "--format=%H", "--", path).stdout.decode().split()
        for commit in commits[:VERSIONS_PER_FILE]:
            shown = git(repo, "show", f"{commit}:{path}")
            if shown.returncode:
                continue
            for entry in entries(shown.stdout.decode(errors="replace")):
                for command, cwd in bash_calls(entry):
                    seen.setdefault(command, (cwd, path))
    return seen


def is_home(path):
    return re.fullmatch(r"/(Users|home)/[^/]+", path) is not None


def scrub(text, root):
    text = text.replace(root, PROJECT)
    text = re.sub(re.escape(root.lower()), PROJECT, text)
    text = re.sub(r"(/private)?/var/folders/[^/\s\"']+/[^/\s\"']+/T", "/tmp", text)
    text = re.sub(r"/(Users|home)/(?!user\b)[^/\s\"':]+", HOME, text)
    for pattern, fake in SCRUB:
        text = re.sub(pattern, fake, text)
    return text


def main(clones, out_dir):
    random.seed(23)
    selected, sources = [], []
    seen_commands = set()
    for folder in sorted(os.listdir(clones)):
        repo = git_dir(os.path.join(clones, folder))
        if repo is None:
            continue
        name = folder.replace("+", "/", 1)
        calls = {c: (cwd, p) for c, (cwd, p) in calls_of(repo).items()
                 if isinstance(cwd, str) and cwd.startswith("/") and not is_home(cwd)}
        cwds = {cwd for cwd, _ in calls.values()}
        items, paths = [], set()
        for command, (cwd, path) in calls.items():
            # The project is the outermost working directory of the repository's sessions above this one.
            root = min((c for c in cwds if cwd == c or cwd.startswith(c + "/")), key=len)
            text = scrub(command, root)
            if not text.strip() or len(text) > MAX_LEN or text in seen_commands:
                continue
            seen_commands.add(text)
            items.append({"source": name, "cwd": cwd[len(root):].lstrip("/") or ".", "command": text})
            paths.add(path)
        if len(items) > CAP_PER_REPO:
            items = [items[i] for i in sorted(random.sample(range(len(items)), CAP_PER_REPO))]
        if items:
            head = git(repo, "rev-parse", "HEAD").stdout.decode().strip()
            sources.append((name, sorted(paths), head[:12], len(items)))
            selected.extend(items)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "commands.jsonl"), "w") as f:
        for item in selected:
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    with open(os.path.join(out_dir, "sources.md"), "w") as f:
        f.write("| repository | log files | commit | commands |\n|---|---|---|---|\n")
        for name, paths, head, count in sources:
            f.write(f"| {name} | {', '.join(paths)} | {head} | {count} |\n")
    print(f"{len(selected)} commands from {len(sources)} repositories", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
