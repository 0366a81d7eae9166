using System.Security.Cryptography;

namespace SieveQ.Policy.Hosting;

/// <summary>
/// The policy source off Windows: a JSON mirror of the registry layout (see <see cref="JsonPolicyMirror"/>).
/// A file watcher gives prompt notice; the periodic re-check covers what watchers miss (network file
/// systems, a directory created after start, an overflowing event buffer).
/// </summary>
public sealed class JsonFilePolicySource : IPolicySource
{
    public const string DefaultPath = "/etc/sieveq/policy.json";
    public const string PathVariable = "SIEVEQ_POLICY";

    private readonly TimeSpan recheckInterval;
    private readonly TimeProvider time;
    private readonly Lock gate = new();
    private FileSystemWatcher? watcher;
    private ITimer? recheck;
    private bool disposed;

    public JsonFilePolicySource(string path, TimeSpan? recheckInterval = null, TimeProvider? time = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        FullPath = Path.GetFullPath(path);
        this.recheckInterval = recheckInterval ?? TimeSpan.FromSeconds(30);
        this.time = time ?? TimeProvider.System;
    }

    public event EventHandler? Changed;

    public string FullPath { get; }

    public string Name => $"file {FullPath}";

    /// <summary>The explicit path if given, else $SIEVEQ_POLICY, else /etc/sieveq/policy.json.</summary>
    public static string ResolvePath(string? explicitPath) =>
        !string.IsNullOrEmpty(explicitPath) ? explicitPath
        : Environment.GetEnvironmentVariable(PathVariable) is { Length: > 0 } fromEnvironment ? fromEnvironment
        : DefaultPath;

    public PolicySnapshot Read()
    {
        byte[] content;
        try
        {
            // Share everything: an editor or deployment tool holding the file must not make the agent fail.
            using var stream = new FileStream(FullPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
            if (stream.Length > PolicyLimits.MaxFileBytes)
            {
                return PolicySnapshot.Failed(Name, $"the policy file is {stream.Length} bytes; at most {PolicyLimits.MaxFileBytes} are read",
                    $"oversize:{stream.Length}");
            }
            content = ReadBounded(stream);
        }
        catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException)
        {
            return PolicySnapshot.NotConfigured(Name);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return PolicySnapshot.Failed(Name, $"cannot read the policy file: {e.Message}", "unreadable:" + e.Message);
        }
        if (content.Length > PolicyLimits.MaxFileBytes)
        {
            return PolicySnapshot.Failed(Name, $"the policy file grew past {PolicyLimits.MaxFileBytes} bytes while being read", "oversize");
        }
        string fingerprint = "sha256:" + Convert.ToHexStringLower(SHA256.HashData(content));
        var root = JsonPolicyMirror.Parse(content, out string? error);
        return root is null
            ? PolicySnapshot.Failed(Name, error!, fingerprint)
            : PolicySnapshot.Read(Name, root, fingerprint);
    }

    public void StartWatching()
    {
        lock (gate)
        {
            ObjectDisposedException.ThrowIf(disposed, this);
            if (recheck is not null)
            {
                return;
            }
            recheck = time.CreateTimer(_ => Raise(), null, recheckInterval, recheckInterval);
            string? directory = Path.GetDirectoryName(FullPath);
            if (directory is null || !Directory.Exists(directory))
            {
                // Nothing to watch yet; the periodic re-check notices when the file appears.
                return;
            }
            watcher = new FileSystemWatcher(directory, Path.GetFileName(FullPath))
            {
                NotifyFilter = NotifyFilters.FileName | NotifyFilters.LastWrite | NotifyFilters.Size | NotifyFilters.CreationTime,
                IncludeSubdirectories = false,
            };
            watcher.Changed += OnFileEvent;
            watcher.Created += OnFileEvent;
            watcher.Deleted += OnFileEvent;
            watcher.Renamed += OnFileEvent;
            watcher.Error += (_, _) => Raise();
            watcher.EnableRaisingEvents = true;
        }
    }

    public void Dispose()
    {
        lock (gate)
        {
            disposed = true;
            watcher?.Dispose();
            watcher = null;
            recheck?.Dispose();
            recheck = null;
        }
    }

    private void OnFileEvent(object sender, FileSystemEventArgs e) => Raise();

    private void Raise()
    {
        if (!Volatile.Read(ref disposed))
        {
            Changed?.Invoke(this, EventArgs.Empty);
        }
    }

    // Reads at most one byte past the limit, whatever the length said, since the file may be growing.
    private static byte[] ReadBounded(FileStream stream)
    {
        byte[] buffer = new byte[Math.Min(stream.Length + 1, PolicyLimits.MaxFileBytes + 1)];
        int total = 0;
        while (true)
        {
            if (total == buffer.Length)
            {
                if (buffer.Length > PolicyLimits.MaxFileBytes)
                {
                    return buffer;
                }
                Array.Resize(ref buffer, Math.Min(buffer.Length * 2, PolicyLimits.MaxFileBytes + 1));
            }
            int read = stream.Read(buffer, total, buffer.Length - total);
            if (read == 0)
            {
                return buffer.AsSpan(0, total).ToArray();
            }
            total += read;
        }
    }
}
