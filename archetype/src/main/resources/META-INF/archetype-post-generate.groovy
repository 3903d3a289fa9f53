// The archetype plugin writes files without their executable bit: give the Maven wrapper its own back, so that
// ./mvnw verify works in the new project as in Settle's repository.
def project = new File(request.outputDirectory, request.artifactId)
def wrapper = new File(project, "mvnw")
if (!wrapper.setExecutable(true, false)) {
    throw new IllegalStateException("cannot make " + wrapper + " executable")
}
