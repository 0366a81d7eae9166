namespace SieveQ.Sieve.Filtering;

/// <summary>The filtering stages of the paper's Figure 4 (plus parsing, which precedes them all).</summary>
public enum SieveStage
{
    Parse = 0,

    /// <summary>(a) whitelist and quarantine list, at the pre-SQ.</summary>
    Whitelist = 1,

    /// <summary>(b) sequence window, at the pre-SQ.</summary>
    Sequence = 2,

    /// <summary>(c) MAC, at the pre-SQ.</summary>
    Mac = 3,

    /// <summary>(d) grant, at the pre-SQ.</summary>
    Grant = 4,

    /// <summary>(e) grant, sequence window and signature again, at the replica-SQ.</summary>
    ReplicaAdmission = 5,

    /// <summary>(f) application rules, at the replica-SQ.</summary>
    Rules = 6,

    /// <summary>(g) vote, at the post-SQ.</summary>
    Vote = 7,
}

/// <summary>Why an input was dropped. Values index counters; append only.</summary>
public enum DropReason
{
    Malformed = 0,
    NotWhitelisted = 1,
    Quarantined = 2,
    Replay = 3,
    TooOld = 4,
    TooFarAhead = 5,
    BadMac = 6,
    GrantExceeded = 7,
    BadSignature = 8,
    BadMerklePath = 9,
    RuleDenied = 10,
    ReceiverQueueFull = 11,
    WrongOrigin = 12,
    UnknownReceiver = 13,
    StaleNonce = 14,
    OutsideVoteWindow = 15,
    Duplicate = 16,
    Equivocation = 17,
    WrongDestination = 18,
    BodyMismatch = 19,
    /// <summary>Ahead of a gap and beyond what may be held: not taken, so the sender sends it again once the gap is filled.</summary>
    OutOfOrder = 20,
    /// <summary>Held for a gap that did not fill in time: let go without being taken (the sender retransmits it).</summary>
    GapTimedOut = 21,
    /// <summary>Names a sender the enrolment does not list: no state is kept for it.</summary>
    NotEnrolled = 22,
    /// <summary>A replica's bodies waiting for a quorum reached its byte budget: the body can still be fetched once f+1 vote.</summary>
    OverBudget = 23,
    /// <summary>The sender or pre-SQ is quarantined by an administrator command, until readmitted: not taken, so it is sent again after readmission.</summary>
    AdminQuarantined = 24,
    /// <summary>The sender has as many rejections unreported as an ACKRES carries: not taken until its next ACKREQ hears of them.</summary>
    VerdictsUnreported = 25,
}
