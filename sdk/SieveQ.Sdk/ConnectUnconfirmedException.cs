namespace SieveQ.Sdk;

/// <summary>
/// <c>ConnectAsync</c> could not get what it asks the running deployment before it starts, within
/// <see cref="SieveQClientConfiguration.ConnectTimeout"/>: the party's enrolment (fewer than f+1 replica-SQs answered
/// alike) or its id lease (no pre-SQ answered). The deployment is down or unreachable, or its replicas disagree while
/// one catches up. Nothing was opened. An application that must start while the deployment is away may fall back to
/// <c>Create</c>, which trusts the configured enrolment and holds no lease; its sender's outbox keeps what it accepts
/// until the deployment returns.
/// </summary>
public sealed class ConnectUnconfirmedException : Exception
{
    /// <summary>
    /// <paramref name="party"/>'s <paramref name="what"/> was not confirmed: <paramref name="answered"/> answered, of which
    /// <paramref name="agreeing"/> alike, <paramref name="needed"/> needed.
    /// </summary>
    public ConnectUnconfirmedException(string party, string what, int answered, int agreeing, int needed, TimeSpan waited, string? lastError)
        : base($"{party}: the running deployment did not confirm {what} within {waited.TotalSeconds:0.#} s: {answered} answered, "
            + $"at most {agreeing} alike, {needed} needed" + (lastError is null ? "" : $" (last error: {lastError})"))
    {
        Answered = answered;
        Agreeing = agreeing;
        Needed = needed;
    }

    /// <summary>Components that answered (replica-SQs for the enrolment, pre-SQs for the lease).</summary>
    public int Answered { get; }

    /// <summary>The largest number of them that gave the same answer.</summary>
    public int Agreeing { get; }

    /// <summary>Answers alike that were needed: f+1 for the enrolment, one agreed result for the lease.</summary>
    public int Needed { get; }
}
