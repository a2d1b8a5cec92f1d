//! `--in-place` safety, through the real binary: nothing is written when any
//! file fails, owner and mode are kept, symbolic links never lead a write
//! out of the tree, and a SIGKILL at any moment leaves each file old or new.

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

fn example() -> String {
    std::fs::read_to_string(common::testdata("example/deploy.yaml")).expect("example")
}

fn in_place(paths: &[&Path]) -> common::Run {
    let mut args = vec!["--in-place".to_string()];
    for path in paths {
        args.push("-f".into());
        args.push(path.to_str().expect("utf-8 path").into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::run(&args, None)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read")
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .expect("meta")
        .modified()
        .expect("mtime")
}

/// Every entry of `dir` (recursively) whose name is not in `expected`.
fn strays(dir: &Path, expected: &[&str]) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !expected.contains(&name.as_str()))
        .collect()
}

#[test]
fn nothing_is_written_when_any_file_fails_to_parse() {
    let dir = tempfile::tempdir().expect("tempdir");
    let names = ["a.yaml", "b.yaml", "c.yaml", "d.yaml"];
    for name in names {
        std::fs::write(dir.path().join(name), example()).expect("write");
    }
    std::fs::write(
        dir.path().join("c.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  name: y\n",
    )
    .expect("write");
    let before: Vec<(String, SystemTime)> = names
        .iter()
        .map(|n| {
            let path = dir.path().join(n);
            (read(&path), mtime(&path))
        })
        .collect();
    let run = in_place(&[dir.path()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr.starts_with(&format!(
            "error: {}: document 1, line 5:3: mapping key \"name\" already defined at line 4\n",
            dir.path().join("c.yaml").display()
        )),
        "{}",
        run.stderr
    );
    for (name, (text, time)) in names.iter().zip(&before) {
        let path = dir.path().join(name);
        assert_eq!(&read(&path), text, "{name} untouched");
        assert_eq!(&mtime(&path), time, "{name} not even rewritten");
    }
    assert!(strays(dir.path(), &names).is_empty());
}

#[test]
fn owner_and_mode_are_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("deploy.yaml");
    std::fs::write(&path, example()).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o604)).expect("chmod");
    let owner = match std::os::unix::fs::chown(&path, Some(4321), Some(8765)) {
        Ok(()) => Some((4321, 8765)),
        Err(_) => {
            common::skip_part(
                "owner_and_mode_are_kept",
                "not allowed to chown here (not root): the owner is not checked",
            );
            None
        }
    };
    let run = in_place(&[&path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let meta = std::fs::metadata(&path).expect("meta");
    assert!(read(&path).contains("- name: linkerd-proxy\n"));
    assert_eq!(meta.permissions().mode() & 0o7777, 0o604);
    if let Some(owner) = owner {
        assert_eq!((meta.uid(), meta.gid()), owner);
    }
    assert!(strays(dir.path(), &["deploy.yaml"]).is_empty());
}

#[test]
fn a_link_out_of_a_directory_refuses_the_run_before_anything_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("repo");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&repo).expect("mkdir");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(outside.join("shared.yaml"), example()).expect("write");
    std::fs::write(repo.join("a.yaml"), example()).expect("write");
    std::os::unix::fs::symlink("../outside/shared.yaml", repo.join("b.yaml")).expect("symlink");
    let run = in_place(&[&repo]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "error: cannot write {}: it is a symbolic link to {}, outside {}; nothing was written \
             (name the file with -f to rewrite it there)\n",
            repo.join("b.yaml").display(),
            std::fs::canonicalize(outside.join("shared.yaml"))
                .expect("canonical")
                .display(),
            repo.display()
        )
    );
    assert_eq!(read(&repo.join("a.yaml")), example(), "nothing written");
    assert_eq!(read(&outside.join("shared.yaml")), example());
    assert!(
        std::fs::symlink_metadata(repo.join("b.yaml"))
            .expect("meta")
            .file_type()
            .is_symlink()
    );
    assert!(strays(dir.path(), &["a.yaml", "b.yaml", "shared.yaml"]).is_empty());

    // Named on the command line, the link's target is rewritten, the link kept.
    let run = in_place(&[&repo.join("b.yaml")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "note: {} is a symbolic link: rewrote its target {}\n",
            repo.join("b.yaml").display(),
            std::fs::canonicalize(outside.join("shared.yaml"))
                .expect("canonical")
                .display()
        )),
        "{}",
        run.stderr
    );
    assert!(
        std::fs::symlink_metadata(repo.join("b.yaml"))
            .expect("meta")
            .file_type()
            .is_symlink()
    );
    assert!(read(&outside.join("shared.yaml")).contains("- name: linkerd-proxy\n"));
    assert_eq!(read(&repo.join("a.yaml")), example());
}

#[test]
fn a_link_inside_the_tree_is_written_through_once_and_stays_a_link() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("base")).expect("mkdir");
    std::fs::write(dir.path().join("base/web.yaml"), example()).expect("write");
    std::os::unix::fs::symlink("base/web.yaml", dir.path().join("web.yaml")).expect("symlink");
    let run = common::run(
        &["-R", "--in-place", "-f", dir.path().to_str().expect("path")],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("note:"), "{}", run.stderr);
    let link = std::fs::symlink_metadata(dir.path().join("web.yaml")).expect("meta");
    assert!(link.file_type().is_symlink());
    let text = read(&dir.path().join("base/web.yaml"));
    assert_eq!(text, common::pipe(None, &example()));
    assert!(strays(dir.path(), &["web.yaml"]).is_empty());
}

#[test]
fn temporaries_of_a_killed_run_are_removed_by_the_next() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("deploy.yaml");
    std::fs::write(&path, common::pipe(None, &example())).expect("write");
    // A process id that no longer runs, and one that does (this test's).
    let mut gone = Command::new("true").spawn().expect("spawn");
    let dead = gone.id();
    gone.wait().expect("wait");
    let stale = format!(".deploy.yaml.mesh-inject.{dead}.0.tmp");
    let live = format!(".deploy.yaml.mesh-inject.{}.0.tmp", std::process::id());
    for name in [&stale, &live] {
        std::fs::write(dir.path().join(name), "half a fi").expect("write");
    }
    // Nothing to inject, yet the directory is cleaned.
    let run = in_place(&[&path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !dir.path().join(&stale).exists(),
        "the dead run's file is removed"
    );
    assert!(dir.path().join(&live).exists(), "a running one's is not");
}

/// Workload files for the kill test: `count` files of `per_file` Deployments.
fn workload_files(dir: &Path, count: usize, per_file: usize) -> BTreeMap<PathBuf, String> {
    let template = example();
    (0..count)
        .map(|i| {
            let text: String = (0..per_file)
                .map(|j| {
                    template
                        .replace("name: web\n", &format!("name: web-{i}-{j}\n"))
                        .replace(
                            "# The quick-start",
                            &format!("---\n# {i}/{j}: the quick-start"),
                        )
                })
                .collect();
            let path = dir.join(format!("app-{i:03}.yaml"));
            std::fs::write(&path, &text).expect("write");
            (path, text)
        })
        .collect()
}

#[test]
fn a_sigkill_at_any_moment_leaves_each_file_old_or_new() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).expect("mkdir");
    let old = workload_files(&repo, 200, 1);
    // The new version of every file: the tool's output on stdout first
    // (every file starts with `---`, so the stream is the files one after
    // the other), then the files a whole in-place run writes, which must add
    // up to that stream.
    let piped = common::run(&["-q", "-f", repo.to_str().expect("path")], None);
    assert_eq!(piped.code, 0, "{}", piped.stderr);

    let binary = assert_cmd::cargo::cargo_bin("kubectl-mesh_inject");
    let start = || {
        Command::new(&binary)
            .args(common::with_anchors(&[
                "-q",
                "--in-place",
                "-f",
                repo.to_str().expect("a UTF-8 path"),
            ]))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn")
    };
    let started = Instant::now();
    let status = start().wait().expect("wait");
    let full = started.elapsed();
    assert!(status.success());
    let new: BTreeMap<PathBuf, String> = old.keys().map(|p| (p.clone(), read(p))).collect();
    assert_eq!(new.values().cloned().collect::<String>(), piped.stdout);
    assert!(old.iter().all(|(path, text)| new[path] != *text));

    let check = |moment: &str| -> (usize, usize) {
        let mut renewed = 0;
        for (path, before) in &old {
            let now = read(path);
            assert!(
                now == *before || now == new[path],
                "{} is neither old nor new after a kill {moment}",
                path.display()
            );
            mesh_inject::yaml::parse_stream(&now).expect("every file parses");
            renewed += usize::from(now == new[path]);
        }
        let mut temporaries = 0;
        for entry in std::fs::read_dir(&repo).expect("ls").filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if old.contains_key(&entry.path()) {
                continue;
            }
            // A leftover is never named like a manifest, so no run reads it.
            assert!(
                name.starts_with('.') && name.ends_with(".tmp"),
                "unexpected file {name} after a kill {moment}"
            );
            temporaries += 1;
        }
        (renewed, temporaries)
    };
    assert_eq!(check("(none)"), (200, 0), "a whole run renews every file");

    // Kills at moments through the reading and planning, then at growing
    // delays after the first temporary file appears: while the new versions
    // are written, and while they are renamed.
    let temporary_exists = || {
        std::fs::read_dir(&repo)
            .expect("ls")
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
    };
    // Last, kills as soon as the first file has been renamed over (its
    // inode changes), in the middle of the renames.
    let first = old.keys().next().expect("a file").clone();
    let inode = |path: &Path| std::fs::metadata(path).map(|m| m.ino()).unwrap_or(0);
    let mut outcomes = Vec::new();
    let fractions = [0.0, 0.3, 0.6];
    let delays_ms = [0, 1, 3, 10, 30, 100, 300];
    let renaming_us = [0, 0, 200, 1000];
    for k in 0..fractions.len() + delays_ms.len() + renaming_us.len() {
        // Back to the old files, without the last kill's leftovers (the
        // last run below removes those of the last kill).
        for entry in std::fs::read_dir(&repo).expect("ls").filter_map(Result::ok) {
            if !old.contains_key(&entry.path()) {
                std::fs::remove_file(entry.path()).expect("remove");
            }
        }
        for (path, text) in &old {
            std::fs::write(path, text).expect("restore");
        }
        let mut child = start();
        let moment = if let Some(fraction) = fractions.get(k) {
            std::thread::sleep(full.mul_f64(*fraction));
            format!("at {:.0}% of a run", fraction * 100.0)
        } else if let Some(delay) = k
            .checked_sub(fractions.len() + delays_ms.len())
            .map(|i| renaming_us[i])
        {
            let before = inode(&first);
            while inode(&first) == before && child.try_wait().expect("wait").is_none() {
                std::thread::sleep(Duration::from_micros(20));
            }
            std::thread::sleep(Duration::from_micros(delay));
            format!("{delay} µs after the first rename")
        } else {
            while !temporary_exists() && child.try_wait().expect("wait").is_none() {
                std::thread::sleep(Duration::from_micros(200));
            }
            let delay = delays_ms[k - fractions.len()];
            std::thread::sleep(Duration::from_millis(delay));
            format!("{delay} ms after the first temporary file")
        };
        let _ = child.kill(); // SIGKILL
        child.wait().expect("wait");
        outcomes.push((moment.clone(), check(&moment)));
    }
    eprintln!("a whole run took {full:?}; after each kill (files renewed, temporaries left):");
    for (moment, (renewed, temporaries)) in &outcomes {
        eprintln!("  killed {moment}: {renewed} renewed, {temporaries} temporaries");
    }
    // The next run finishes the job and removes what the killed ones left.
    let run = in_place(&[&repo]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(check("(after a last run)"), (200, 0));
}
