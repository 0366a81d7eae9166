namespace SieveQ.Transport;

/// <summary>
/// The time a call with one request (unary or server-streaming) has, from its start, to deliver that request. The
/// gRPC mapping lifts Kestrel's minimum body rate for every method (a stream may rightly be quiet), so without this
/// a client trickling a Health body one byte at a time held its stream for as long as it liked: the slowloris attack
/// kept 810 such calls open on a pre-SQ for a whole minute.
/// </summary>
public static class GrpcRequestDeadline
{
    private static long _expired;

    /// <summary>Calls ended because their request did not arrive in time, in this process.</summary>
    public static long Expired => Interlocked.Read(ref _expired);

    internal static void Count() => Interlocked.Increment(ref _expired);
}
