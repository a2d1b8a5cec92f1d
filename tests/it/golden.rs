//! Input/expected pairs: `testdata/inject/NAME` injected gives
//! `testdata/inject/expected/NAME` on stdout and `NAME.report` on stderr.
//! Regenerate with `UPDATE_GOLDEN=1 cargo test --test golden`, then review the diff.

use crate::common;

#[test]
fn injected_outputs_match_the_expected_files() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let dir = common::testdata("inject");
    let expected_dir = dir.join("expected");
    let mut compared = 0;
    for input in common::manifests_under(&dir) {
        if input.starts_with(&expected_dir) {
            continue;
        }
        let name = input
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        let mut cmd = common::command_with(&["-f", &format!("testdata/inject/{name}")]);
        cmd.current_dir(common::repo());
        let run: common::Run = cmd.output().expect("runs").into();
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let out_path = expected_dir.join(&name);
        let report_path = expected_dir.join(format!("{name}.report"));
        if update {
            std::fs::create_dir_all(&expected_dir).expect("mkdir");
            std::fs::write(&out_path, &run.stdout).expect("write");
            std::fs::write(&report_path, &run.stderr).expect("write");
        }
        let expected = std::fs::read_to_string(&out_path).unwrap_or_else(|_| {
            panic!(
                "{} is missing: run with UPDATE_GOLDEN=1",
                out_path.display()
            )
        });
        assert_eq!(
            run.stdout,
            expected,
            "{name}: output differs from {}",
            out_path.display()
        );
        let report = std::fs::read_to_string(&report_path).expect("report");
        assert_eq!(run.stderr, report, "{name}: report differs");
        compared += 1;
    }
    assert!(compared >= 7, "compared {compared} files");
}
