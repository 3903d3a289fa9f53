/**
 * The settlement journal (docs/trace.md): one small record per settled delivery of a subscription with
 * {@code journal: true} (and of each call's beginning with {@code journalPerHandling: true}), written to a Pulsar topic
 * off the message path, and the story {@code settle trace} tells
 * from those records and the dead-letter topic.
 *
 * <p>{@link dev.settle.runtime.journal.SubscriptionJournal} implements the driver's {@code Journal} port; a
 * {@link dev.settle.runtime.journal.JournalWriter} queues records (bounded, never blocking) and hands them to the
 * topic's producer at least every 100 ms; a topic that cannot be written loses records, counted, and delays nothing.
 */
package dev.settle.runtime.journal;
