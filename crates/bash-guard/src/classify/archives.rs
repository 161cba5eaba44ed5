//! Archivers and compressors: listing, testing or printing an archive only reads; creating or extracting writes.

use crate::analysis::{AccessVia, CommandClass};
use crate::knowledge::{self, Archive, GNU, Syntax};
use crate::options;
use crate::word::Word;

use super::{Classified, flags};

/// `tar`: `-t` lists and `-d` compares (reads), `-x` extracts into the directory (`-C DIR`, else the working
/// directory) and `-c`/`-r`/`-u` write the archive (`-f FILE`); `-O` extracts to standard output. Options that run
/// programs (`-I`, `--to-command`, `--checkpoint-action`, `-F`, `--rsh-command`) and a remote archive
/// (`-f host:file`) ask.
pub(super) fn tar(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    // The traditional first word without a dash is a cluster of option letters (`tar tzf x.tgz`).
    let rewritten: Vec<Word>;
    let args = match args.split_first() {
        Some((first, rest))
            if first.literal
                && !first.text.starts_with('-')
                && first.text.chars().all(|c| c.is_ascii_alphabetic()) =>
        {
            rewritten = std::iter::once(Word::literal(&format!("-{}", first.text)))
                .chain(rest.iter().cloned())
                .collect();
            rewritten.as_slice()
        }
        _ => args,
    };
    let parsed = options::read(args, &knowledge::TAR);
    let before = c.writes.len();
    c.read_only = true;
    flags::effects(&parsed.effects(&knowledge::TAR), c);
    let effects_ok = c.read_only && c.writes.len() == before;
    let has = |names: &[&str]| parsed.has(names);
    let lists = has(&["-t", "--list", "-d", "--diff", "--compare"]);
    let to_stdout = has(&["-O", "--to-stdout"]);
    let extracts = has(&["-x", "--extract", "--get"]);
    let creates = has(&[
        "-c",
        "--create",
        "-r",
        "--append",
        "-u",
        "--update",
        "-A",
        "--catenate",
        "--concatenate",
        "--delete",
    ]);
    let archive = parsed
        .options
        .iter()
        .filter(|o| o.is_any(&["-f", "--file"]))
        .filter_map(|o| o.value.clone())
        .next_back();
    if let Some(archive) = &archive {
        let remote = archive
            .text
            .split_once(':')
            .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'));
        if remote && !has(&["--force-local"]) {
            c.changes_as(CommandClass::Network);
            c.ask(format!(
                "`tar -f {}` reaches a remote archive through a remote shell",
                archive.text
            ));
        }
    }
    c.directory = parsed
        .options
        .iter()
        .filter(|o| o.is_any(&["-C", "--directory"]))
        .filter_map(|o| o.value.clone())
        .next_back();
    let stdin = archive.as_ref().is_none_or(|a| a.literal && a.text == "-");
    if (lists || (extracts && to_stdout)) && !creates {
        if let Some(archive) = archive.filter(|_| !stdin) {
            c.read(&archive, AccessVia::Flag);
        }
        c.read_only = c.read_only && effects_ok && !parsed.dynamic;
        if c.read_only {
            c.class = CommandClass::ReadOnly;
        }
        // With `-d`, the operands are files compared with the archive's copies.
        if has(&["-d", "--diff", "--compare"]) {
            parsed.operands.iter().for_each(|o| c.read(o, AccessVia::Operand));
        }
        return;
    }
    c.read_only = false;
    if extracts {
        if let Some(archive) = archive.filter(|_| !stdin) {
            c.read(&archive, AccessVia::Flag);
        }
        // The members land below the directory it extracts into: the working directory, which `-C DIR` makes DIR
        // (the command's accesses are placed under its directory when they are recorded).
        c.write(&Word::literal("."), AccessVia::Flag);
    } else {
        if let Some(archive) = archive.filter(|_| !stdin) {
            c.write(&archive, AccessVia::Flag);
        }
        // `--remove-files` removes each file once it is in the archive.
        let removes = has(&["--remove-files"]);
        parsed.operands.iter().for_each(|o| {
            c.read(o, AccessVia::Operand);
            if removes {
                c.write(o, AccessVia::Operand);
            }
        });
    }
}

/// A compressor or archiver that only reads when one of its listing, testing or printing options is given.
pub(super) fn archive(table: &Archive, args: &[Word], c: &mut Classified) {
    let syntax = Syntax {
        values: table.values,
        optional: table.optional,
        effects: table.effects,
        ..GNU
    };
    let parsed = options::read(args, &syntax);
    let before = c.writes.len();
    c.read_only = true;
    flags::effects(&parsed.effects(&syntax), c);
    let effects_ok = c.read_only && c.writes.len() == before;
    let first = parsed
        .operands
        .first()
        .filter(|o| o.literal)
        .map(|o| o.text.as_str());
    let reads =
        table.bare_reads || parsed.has(table.reads) || first.is_some_and(|f| table.read_subs.contains(&f));
    let mut operands = parsed.operands.iter();
    if !table.read_subs.is_empty() {
        operands.next();
    }
    if reads && !parsed.dynamic && effects_ok {
        c.read_only_as(CommandClass::ReadOnly);
        operands.for_each(|o| c.read(o, AccessVia::Operand));
        return;
    }
    c.changes_as(CommandClass::Write);
    operands.for_each(|o| c.write(o, AccessVia::Operand));
}
