// The generated project's wrapper is executable: its README and docs/dev.md run ./mvnw verify.
assert new File(basedir, "greeter-function/mvnw").canExecute()
