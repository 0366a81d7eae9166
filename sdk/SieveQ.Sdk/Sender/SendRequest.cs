namespace SieveQ.Sdk.Sender;

/// <summary>
/// One SendAsync call waiting for its number. The pump claims it before numbering it, and a
/// cancellation claims it before giving up, so a caller that sees a cancellation knows its message
/// was not numbered (and will not be sent), and one that gets a number knows it will be.
/// </summary>
internal sealed class SendRequest
{
    private const int Waiting = 0;
    private const int Claimed = 1;
    private const int Cancelled = 2;

    private readonly TaskCompletionSource<SentMessage> _numbered = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _state;

    public SendRequest(int receiver, ReadOnlyMemory<byte> data)
    {
        Receiver = receiver;
        Data = data;
    }

    public int Receiver { get; }
    public ReadOnlyMemory<byte> Data { get; }
    public Task<SentMessage> Numbered => _numbered.Task;

    /// <summary>True when the pump may number this message (the caller has not given up).</summary>
    public bool TryClaim() => Interlocked.CompareExchange(ref _state, Claimed, Waiting) == Waiting;

    public void Complete(SentMessage message) => _numbered.TrySetResult(message);

    public void Fail(Exception e) => _numbered.TrySetException(e);

    public void Cancel(CancellationToken ct)
    {
        if (Interlocked.CompareExchange(ref _state, Cancelled, Waiting) == Waiting)
        {
            _numbered.TrySetCanceled(ct);
        }
    }
}
