// The generated project's wrapper is executable: its README and examples/README.md run ./mvnw verify.
assert new File(basedir, "greeter/mvnw").canExecute()
