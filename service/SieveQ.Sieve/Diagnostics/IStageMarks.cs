using System.Buffers.Binary;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Diagnostics;

/// <summary>
/// Where a sampled message's passage through a stage is reported (see <see cref="StageNames"/>). The
/// sieve's classes take one from their host instead of reading a process-wide sink, so they stay free
/// of the clock and the environment: the host's implementation timestamps and stores the marks (the
/// stage trace of SieveQ.Sieve.Hosting). A mark never touches agreed state.
/// </summary>
public interface IStageMarks
{
    /// <summary>False when nothing is recorded; callers skip the work of finding what to mark.</summary>
    bool Enabled { get; }

    /// <summary>Reports that (sender, seq) reached <paramref name="stage"/>; the sink decides whether it is sampled.</summary>
    void Mark(string stage, int sender, long seq);
}

/// <summary>Records nothing: the default where no host configured a stage trace.</summary>
public sealed class NoStageMarks : IStageMarks
{
    public static NoStageMarks Instance { get; } = new();

    private NoStageMarks()
    {
    }

    public bool Enabled => false;

    public void Mark(string stage, int sender, long seq)
    {
    }
}

/// <summary>Marks every sender message carried by an ordering request (decoding only when marks are recorded).</summary>
public static class OrderingRequestMarks
{
    /// <summary>Marks every sender message inside an ordering-request payload; an unparsable payload marks nothing.</summary>
    public static void MarkOrderingPayload(this IStageMarks marks, string stage, ReadOnlyMemory<byte> payload)
    {
        ArgumentNullException.ThrowIfNull(marks);
        if (!marks.Enabled)
        {
            return;
        }
        OrderingRequest request;
        try
        {
            request = OrderingRequestCodec.Decode(payload);
        }
        catch (MalformedEnvelopeException)
        {
            return;
        }
        marks.MarkOrderingRequest(stage, request);
    }

    /// <summary>Marks every sender message of an ordering request already decoded.</summary>
    public static void MarkOrderingRequest(this IStageMarks marks, string stage, OrderingRequest request)
    {
        ArgumentNullException.ThrowIfNull(marks);
        ArgumentNullException.ThrowIfNull(request);
        if (!marks.Enabled)
        {
            return;
        }
        foreach (var item in request.Items)
        {
            // Sender message: u8 kind | u32 sender | u64 seq | ...
            var span = item.Span;
            if (span.Length >= 13 && span[0] == (byte)StructureKind.SenderMessage)
            {
                marks.Mark(stage, (int)BinaryPrimitives.ReadUInt32LittleEndian(span[1..]), (long)BinaryPrimitives.ReadUInt64LittleEndian(span[5..]));
            }
        }
    }
}
