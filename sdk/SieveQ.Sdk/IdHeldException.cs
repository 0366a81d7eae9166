namespace SieveQ.Sdk;

/// <summary>
/// Another process holds this sender's or receiver's id: <c>ConnectAsync</c> refuses to start a second holder (two
/// processes sending under one id would take each other's sequence numbers, and be refused as replays), and a running
/// sender or receiver stops with it when it finds its lease taken after it could not renew it in time. The replicas
/// grant the lease through the ordering, so f+1 of them agreed on the holder named here.
/// </summary>
public sealed class IdHeldException : Exception
{
    /// <summary>The <paramref name="party"/> id is held by <paramref name="holder"/> for <paramref name="heldFor"/> more unless it renews.</summary>
    public IdHeldException(string party, int id, string holder, TimeSpan heldFor)
        : base($"{party} {id} is held by another process: {holder} (its lease runs {heldFor.TotalSeconds:0} s more unless it renews; "
            + "it renews every 10 s while it runs). Stop that process, or give this one another id")
    {
        Party = party;
        Id = id;
        Holder = holder;
        HeldFor = heldFor;
    }

    /// <summary>"sender" or "receiver".</summary>
    public string Party { get; }

    /// <summary>The id asked for.</summary>
    public int Id { get; }

    /// <summary>Who holds it, as that process described itself (host, process id, program, state folder).</summary>
    public string Holder { get; }

    /// <summary>How long its lease runs unless renewed.</summary>
    public TimeSpan HeldFor { get; }
}
