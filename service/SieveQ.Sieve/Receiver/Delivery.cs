namespace SieveQ.Sieve.Receiver;

/// <summary>A message the post-SQ hands to the application: f+1 replicas vouched for it.</summary>
public readonly record struct Delivery(int Sender, long SenderSeq, long RouteSeq, ReadOnlyMemory<byte> Data);

/// <summary>A rendered body fetch request for one replica.</summary>
public readonly record struct FetchOrder(int Replica, byte[] Request);

/// <summary>What one input to the voter produced.</summary>
public sealed record PostSqStep(bool Accepted, IReadOnlyList<Delivery> Deliveries, IReadOnlyList<FetchOrder> Fetches)
{
    public static readonly PostSqStep Rejected = new(false, [], []);
}
