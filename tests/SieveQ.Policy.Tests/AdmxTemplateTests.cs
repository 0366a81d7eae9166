using System.Xml.Linq;

namespace SieveQ.Policy.Tests;

public class AdmxTemplateTests
{
    private static readonly string AdmxText = File.ReadAllText(RepoPaths.Admx);
    private static readonly string AdmlText = File.ReadAllText(RepoPaths.Adml);

    [Fact]
    public void Schema_folder_is_found()
    {
        // Throws (fails) rather than skipping when ../shared/schemas/admx is absent.
        Assert.True(File.Exists(Path.Combine(RepoPaths.AdmxSchemas, "BaseTypes.xsd")));
    }

    [Fact]
    public void A_missing_schema_folder_is_an_error_not_a_skip()
    {
        string lonely = Path.Combine(Path.GetTempPath(), "sieveq-no-shared-" + Guid.NewGuid().ToString("N"), "repo");
        var e = Assert.Throws<InvalidOperationException>(() => RepoPaths.SchemaFolder(lonely));
        Assert.Contains("the ADMX schema is not at", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Admx_is_valid_against_the_public_schema()
    {
        Assert.Empty(AdmxTemplateChecker.ValidateAgainstSchema(AdmxText, "SieveQ.admx"));
    }

    [Fact]
    public void Adml_is_valid_against_the_public_schema()
    {
        Assert.Empty(AdmxTemplateChecker.ValidateAgainstSchema(AdmlText, "en-US/SieveQ.adml"));
    }

    [Fact]
    public void Every_reference_resolves_and_every_resource_is_used()
    {
        Assert.Empty(AdmxTemplateChecker.CheckReferences(XDocument.Parse(AdmxText), XDocument.Parse(AdmlText)));
    }

    [Fact]
    public void The_checker_sees_references_at_all()
    {
        // Guards the test above against a checker that finds nothing because it looks in the wrong place.
        var admx = XDocument.Parse(AdmxText);
        int references = admx.Descendants().Attributes().Count(a => a.Value.StartsWith("$(", StringComparison.Ordinal));
        Assert.True(references > 20, $"only {references} references found");
    }

    public static TheoryData<string, string> Breakages => new()
    {
        { "missing string", "the ADMX references $(string.DriverMode_Audit) but the ADML has no string 'DriverMode_Audit'" },
        { "missing presentation", "the ADMX references $(presentation.RuleSet) but the ADML has no presentation 'RuleSet'" },
        { "unused string", "the ADML string 'Orphan' is not referenced by the ADMX" },
        { "unused presentation", "the ADML presentation 'OrphanPresentation' is not referenced by the ADMX" },
        { "wrong refId", "refers to 'MessagesPerSecond', which is not an element of policy 'DefaultRateLimits'" },
        { "element without control", "policy 'Enrolment': element 'EnrolmentId' has no control" },
        { "control of the wrong kind", "a textBox cannot show the enum element 'DriverMode'" },
    };

    [Theory]
    [MemberData(nameof(Breakages))]
    public void A_broken_copy_is_caught(string breakage, string expected)
    {
        var admx = XDocument.Parse(AdmxText);
        var adml = XDocument.Parse(AdmlText);
        Break(breakage, adml);

        var problems = AdmxTemplateChecker.CheckReferences(admx, adml);

        Assert.Contains(problems, p => p.Contains(expected, StringComparison.Ordinal));
    }

    [Fact]
    public void A_broken_copy_fails_the_schema()
    {
        string broken = AdmxText.Replace("<policies>", "<policies><policyy name=\"X\" />", StringComparison.Ordinal);
        Assert.NotEmpty(AdmxTemplateChecker.ValidateAgainstSchema(broken, "broken.admx"));
        string badReference = AdmxText.Replace("displayName=\"$(string.DriverMode)\"", "displayName=\"DriverMode\"", StringComparison.Ordinal);
        Assert.NotEmpty(AdmxTemplateChecker.ValidateAgainstSchema(badReference, "broken.admx"));
    }

    private static void Break(string breakage, XDocument adml)
    {
        var pd = AdmxTemplateChecker.Pd;
        XElement Presentation(string id) => adml.Descendants(pd + "presentation").Single(p => (string?)p.Attribute("id") == id);
        switch (breakage)
        {
            case "missing string":
                adml.Descendants(pd + "string").Single(s => (string?)s.Attribute("id") == "DriverMode_Audit").Remove();
                break;
            case "missing presentation":
                Presentation("RuleSet").Remove();
                break;
            case "unused string":
                adml.Descendants(pd + "stringTable").Single().Add(new XElement(pd + "string", new XAttribute("id", "Orphan"), "orphan"));
                break;
            case "unused presentation":
                adml.Descendants(pd + "presentationTable").Single().Add(new XElement(pd + "presentation", new XAttribute("id", "OrphanPresentation")));
                break;
            case "wrong refId":
                Presentation("DefaultRateLimits").Elements().First().SetAttributeValue("refId", "MessagesPerSecond");
                break;
            case "element without control":
                Presentation("Enrolment").Elements().Single(c => (string?)c.Attribute("refId") == "EnrolmentId").Remove();
                break;
            case "control of the wrong kind":
                Presentation("DriverMode").Elements().Single().ReplaceWith(
                    new XElement(pd + "textBox", new XAttribute("refId", "DriverMode"), new XElement(pd + "label", "Mode")));
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(breakage));
        }
    }
}
