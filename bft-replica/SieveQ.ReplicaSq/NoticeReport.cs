namespace SieveQ.ReplicaSq;

/// <summary>How a notice's report to the controller ended.</summary>
public enum NoticeReport
{
    /// <summary>The controller took it (counted towards f+1, or completed it).</summary>
    Taken,

    /// <summary>The controller refused it (this replica's key not pinned as a replica, a malformed notice, its share full).</summary>
    Refused,

    /// <summary>Not reported: the queue to the controller was full, or the controller did not answer after every retry.</summary>
    Dropped,
}
