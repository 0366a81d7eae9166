using SieveQ.Bft.Codec;

namespace SieveQ.Sieve.Replica;

/// <summary>
/// The most bytes the replicated sieve's agreed state can take, from its budgets and the enrolment: what every
/// checkpoint, every snapshot in the write-ahead log and every state-transfer reply must carry. Records exist only
/// for enrolled parties; queued and held messages are bounded by bytes (<see cref="ReplicaSieveOptions.QueuedBytesTotal"/>,
/// <see cref="ReplicaSieveOptions.MaxHeldBytes"/>), each charged its DATA plus <see cref="ReplicaSieveOptions.ItemOverheadBytes"/>.
/// The replicated application refuses to start when this could exceed <see cref="Limit"/>: a state that outgrew a
/// checkpoint would leave a lagging replica unable to catch up (and a replica unable to log its checkpoint), long after
/// the deployment was set up. State transfer carries a checkpoint in chunks, so one frame no longer bounds it.
/// </summary>
public static class SieveStateBudget
{
    /// <summary>
    /// The largest application snapshot a checkpoint carries (<see cref="WireLimits.MaxSnapshotBytes"/>, which the
    /// write-ahead log's record and the state decoder enforce) less room for the ordering's client table, which the
    /// checkpoint carries too.
    /// </summary>
    public const long Limit = WireLimits.MaxSnapshotBytes - (4L << 20);

    /// <summary>A rule set document (at most 4 MiB, the pre-SQ's and the rule checker's bound) and the evaluator's own state.</summary>
    public const long RulesAllowanceBytes = 6L << 20;

    private const int FixedBytes = 256;
    private const int RecordBytes = 256;
    private const int RouteBytes = 32;

    /// <summary>A sender's record: its sequence window (one bit per number) and its fixed fields.</summary>
    public static long SenderRecordBytes(ReplicaSieveOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        return (options.WindowSize / 8) + RecordBytes;
    }

    public static long WorstCaseBytes(ReplicaSieveOptions options, int senders, int receivers, int preSqs, long rulesBytes = RulesAllowanceBytes)
    {
        ArgumentNullException.ThrowIfNull(options);
        // Parties enrolled through the ordering get records (senders) or queues (receivers) too, and their keys sit in
        // the enrolment table; either role may take the whole allowance.
        senders += options.MaxEnrolmentChanges;
        receivers += options.MaxEnrolmentChanges;
        return FixedBytes
            + (senders * SenderRecordBytes(options))
            + ((long)options.MaxEnrolmentChanges * EnrolmentChangeTable.MaxEntryBytes)
            + IdLeaseTable.WorstCaseBytes(senders + receivers)
            + ((long)preSqs * RecordBytes)
            + (receivers * (RecordBytes + ((long)senders * RouteBytes)))
            + options.QueuedBytesTotal
            + options.MaxHeldBytes
            + rulesBytes;
    }

    /// <exception cref="ArgumentException">The budgets and the enrolment allow a state above <see cref="Limit"/>; says which figures to lower.</exception>
    public static void Check(ReplicaSieveOptions options, int senders, int receivers, int preSqs)
    {
        var worst = WorstCaseBytes(options, senders, receivers, preSqs);
        if (worst > Limit)
        {
            throw new ArgumentException(
                $"the replicated sieve's state could reach {worst} bytes ({senders} senders, {receivers} receivers, queuedBytesTotal {options.QueuedBytesTotal}, "
                + $"maxHeldBytes {options.MaxHeldBytes}), above the {Limit} bytes a checkpoint carries: lower queuedBytesTotal or maxHeldBytes, or the window size");
        }
    }
}
