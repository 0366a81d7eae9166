using SieveQ.Deployment;
using SieveQ.Sieve.Keys;

namespace SieveQ.AdminUi.Figures;

/// <summary>
/// The receivers the deployment's enrolment file lists (id and name; the console reads no key), or why it could not be
/// read. Parsed without the full check: the console only lists who is enrolled; the replicas validate the enrolment
/// they run on.
/// </summary>
public sealed record EnrolledReceivers(IReadOnlyDictionary<int, string> Names, string? Error)
{
    /// <summary>An enrolment of thousands of parties is well under this; a larger file is refused, not read.</summary>
    public const long MaxFileBytes = 8 * 1024 * 1024;

    public static async Task<EnrolledReceivers> ReadAsync(DeploymentConfig deployment, CancellationToken ct)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        var path = deployment.Resolve(deployment.EnrolmentFile);
        try
        {
            var info = new FileInfo(path);
            if (!info.Exists)
            {
                return new EnrolledReceivers(new Dictionary<int, string>(), $"no enrolment file at {deployment.EnrolmentFile}");
            }
            if (info.Length > MaxFileBytes)
            {
                return new EnrolledReceivers(new Dictionary<int, string>(), $"{deployment.EnrolmentFile} is larger than {MaxFileBytes} bytes; not read");
            }
            var enrolment = Enrolment.ParseWithoutValidation(await File.ReadAllTextAsync(path, ct).ConfigureAwait(false));
            var names = new Dictionary<int, string>();
            foreach (var r in enrolment.Receivers ?? [])
            {
                names.TryAdd(r.Id, r.Name);
            }
            return new EnrolledReceivers(names, null);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException)
        {
            return new EnrolledReceivers(new Dictionary<int, string>(), $"{deployment.EnrolmentFile} could not be read: {e.Message}");
        }
    }
}
