using SieveQ.Firewall.Enforcement;
using SieveQ.Firewall.Policy;
using SieveQ.Policy;

namespace SieveQ.Fuzz;

/// <summary>
/// The agent's policy file (the JSON mirror of the Group Policy key) all the way to the driver's blob:
/// <see cref="JsonPolicyMirror.Parse"/>, <see cref="PolicyLoader.Evaluate"/>, then for a valid policy
/// <see cref="AgentEndpointPolicy.From"/> and <see cref="PolicyCompiler.Compile"/> as the enforcer does.
/// Contract: parsing and evaluating never throw (a bad file is a null with an error, a bad policy a list
/// of errors); compiling refuses only with <see cref="PolicyException"/>; a parsed mirror writes back to
/// a document that parses to the same key.
/// </summary>
internal sealed class MirrorPolicyTarget : FuzzTarget
{
    public override string Name => "policy-mirror";

    public override void Run(byte[] input)
    {
        Outcome = "accepted";
        var root = JsonPolicyMirror.Parse(input, out var error);
        if (root is null)
        {
            if (string.IsNullOrEmpty(error))
            {
                throw new ContractViolation("a refused policy file came without an error");
            }
            Refused(error);
            return;
        }
        var written = JsonPolicyMirror.Write(root);
        var again = JsonPolicyMirror.Parse(System.Text.Encoding.UTF8.GetBytes(written), out var againError)
            ?? throw new ContractViolation($"the mirror written back from a parsed file does not parse: {againError}");
        if (JsonPolicyMirror.Write(again) != written)
        {
            throw new ContractViolation("the mirror does not round-trip");
        }
        var evaluation = PolicyLoader.Evaluate(PolicySnapshot.Read("fuzz", root, "fuzz"));
        if (!evaluation.IsValid)
        {
            Refused(string.Join("; ", evaluation.Errors));
            return;
        }
        try
        {
            _ = PolicyCompiler.Compile(AgentEndpointPolicy.From(evaluation.Policy!, 1, "/opt/sieveq/bin/sieveq-agent"));
        }
        catch (PolicyException e)
        {
            Refused(e);
        }
    }

    public override IEnumerable<byte[]> Seeds()
    {
        yield return """
            {
              "SOFTWARE\\Policies\\SieveQ": {
                "DriverMode": "audit",
                "ControllerUrl": "https://controller.example.org",
                "EnrolmentId": "host-17",
                "KeyStorageProvider": "software",
                "RuleSetLocation": "/etc/sieveq/rules.json",
                "RuleSetSigner": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAER6NhrAweRzYBCLEpFYXwY7midUGgyQTrrA4rv1bxDN9vpqt6E+83IXLddn51so62OVQnvN+mDxlRSyDF4PWKDQ==",
                "DefaultMessagesPerSecond": 5000,
                "DefaultMessageBurst": 8000,
                "DefaultConnectionsPerSecond": 50,
                "PreSqEndpoints": { "1": "http://presq-1.example.org:7401", "2": "http://presq-2.example.org:7401" },
                "ApplicationWhitelist": { "/opt/example/bin/app": "50d858e0985ecc7f60418aaf0cc5ab587f42c2570a884095a9e8ccacd0f6545c" }
              }
            }
            """u8.ToArray();
        yield return """{"SOFTWARE\\Policies\\SieveQ": {"DriverMode": "enforce", "PreSqEndpoints": {"1": "http://[::1]:7401"}, "ApplicationWhitelist": {"C:\\Program Files\\App\\app.exe": ""}}}"""u8.ToArray();
        yield return """{"SOFTWARE\\Policies\\SieveQ": {}}"""u8.ToArray();
    }
}
