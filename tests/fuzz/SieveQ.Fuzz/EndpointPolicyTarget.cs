using System.Text;
using SieveQ.Firewall.Policy;

namespace SieveQ.Fuzz;

/// <summary>
/// The endpoint policy file an operator hands to <c>sieveq firewall push</c>: <see cref="EndpointPolicy.Parse"/>
/// then <see cref="PolicyCompiler.Compile"/> into the driver's blob. Contract: both refuse only with
/// <see cref="PolicyException"/>.
/// </summary>
internal sealed class EndpointPolicyTarget : FuzzTarget
{
    public override string Name => "endpoint-policy";

    public override void Run(byte[] input)
    {
        Outcome = "accepted";
        try
        {
            var policy = EndpointPolicy.Parse(Encoding.UTF8.GetString(input));
            _ = PolicyCompiler.Compile(policy);
        }
        catch (PolicyException e)
        {
            Refused(e);
        }
    }

    public override IEnumerable<byte[]> Seeds()
    {
        var golden = Path.Combine(AppContext.BaseDirectory, "golden");
        return Directory.Exists(golden) ? Directory.GetFiles(golden, "*.json").Order(StringComparer.Ordinal).Select(File.ReadAllBytes) : [];
    }
}
