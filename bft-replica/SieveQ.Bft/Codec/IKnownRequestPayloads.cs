namespace SieveQ.Bft.Codec;

/// <summary>
/// Request payloads a host already holds, which a PROPOSE decode may share instead of copying. The
/// codec stays free of the host's shared, locked cache (SieveQ.Bft.Hosting's KnownRequestPayloads):
/// it only asks for an array with the given bytes, so what it decodes never depends on the answer.
/// </summary>
public interface IKnownRequestPayloads
{
    /// <summary>An array holding exactly <paramref name="bytes"/>: the remembered one for this request if its bytes are equal, else a fresh copy.</summary>
    byte[] ShareOrCopy(int client, long sequence, ReadOnlySpan<byte> bytes);
}
