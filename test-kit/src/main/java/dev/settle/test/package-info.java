/**
 * The test kit ({@code dev.settle:settle-test}): a handler or a Pulsar Function run as {@code settle run} runs it, on a
 * simulated broker and a clock the test moves. Start at {@link dev.settle.test.SettleTestDriver}.
 *
 * <p><b>Supported API</b>, every public type of it, and the runtime types its members take, return or throw, which say
 * so themselves (docs/design.md, "The supported API").
 */
package dev.settle.test;
