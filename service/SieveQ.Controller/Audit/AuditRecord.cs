namespace SieveQ.Controller.Audit;

/// <summary>
/// One entry of the audit log: who or what asked (<see cref="Actor"/>: a caller's key id and role, or
/// "f+1 replicas [ids]"), what (<see cref="Action"/> on <see cref="Target"/>), what came of it, and the hash of
/// the record before it. <see cref="Hash"/> covers every other field (<see cref="AuditRecordCodec.HashOf"/>).
/// </summary>
public sealed record AuditRecord(long Sequence, long TimeUnixMs, string Actor, string Action, string Target, string Outcome, byte[] PreviousHash, byte[] Hash)
{
    public DateTimeOffset Time => DateTimeOffset.FromUnixTimeMilliseconds(TimeUnixMs);
}
