/**
 * From a manifest file to what runs: {@link dev.settle.runtime.deployment.Preflight} validates the manifest and
 * loads every handler, giving a {@link dev.settle.runtime.deployment.Deployment}. Uses the manifest and isolation
 * packages; knows nothing of Pulsar.
 */
package dev.settle.runtime.deployment;
