namespace SieveQ.Policy;

/// <summary>Where the agent's policy comes from: the registry on Windows, a JSON mirror file elsewhere.</summary>
public interface IPolicySource : IDisposable
{
    /// <summary>Names the source in logs, alarms and metrics.</summary>
    string Name { get; }

    /// <summary>Reads the whole policy as it is now. Never throws for bad content: that is a failed snapshot.</summary>
    PolicySnapshot Read();

    /// <summary>
    /// Raised when the policy may have changed. It may be raised for changes that turn out to be none, and
    /// while a writer is still busy; <see cref="PolicyMonitor"/> waits for quiet and compares fingerprints.
    /// </summary>
    event EventHandler? Changed;

    void StartWatching();
}
