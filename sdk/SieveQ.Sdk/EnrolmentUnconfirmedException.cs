namespace SieveQ.Sdk;

/// <summary>
/// <c>ConnectAsync</c> could not learn this party's enrolment from the running deployment: fewer than f+1 replica-SQs
/// answered alike within <see cref="SieveQClientConfiguration.ConnectTimeout"/> (the deployment is down or unreachable,
/// or the replicas disagree while one catches up). Nothing was opened. An application that must start while the
/// deployment is away may fall back to <c>Create</c>, which trusts the configured enrolment; its sender's outbox keeps
/// what it accepts until the deployment returns.
/// </summary>
public sealed class EnrolmentUnconfirmedException : Exception
{
    /// <summary>A failed check of <paramref name="party"/>: <paramref name="answered"/> replicas answered, of which <paramref name="agreeing"/> alike, <paramref name="needed"/> needed.</summary>
    public EnrolmentUnconfirmedException(string party, int answered, int agreeing, int needed, TimeSpan waited, string? lastError)
        : base($"{party}: the running deployment did not confirm its enrolment within {waited.TotalSeconds:0.#} s: {answered} replica-SQs answered, "
            + $"at most {agreeing} alike, {needed} needed" + (lastError is null ? "" : $" (last error: {lastError})"))
    {
        Answered = answered;
        Agreeing = agreeing;
        Needed = needed;
    }

    /// <summary>Replica-SQs that answered the lookup.</summary>
    public int Answered { get; }

    /// <summary>The largest number of them that gave the same answer.</summary>
    public int Agreeing { get; }

    /// <summary>Answers alike that were needed: f+1.</summary>
    public int Needed { get; }
}
