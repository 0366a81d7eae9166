using System.Text.RegularExpressions;
using System.Xml;
using System.Xml.Linq;
using System.Xml.Schema;

namespace SieveQ.Policy.Tests;

/// <summary>
/// Checks an ADMX/ADML pair: against Microsoft's schema, and for what the schema cannot see (every
/// reference resolves, every resource is used, every presentation control matches an element of its policy).
/// Returns problems as sentences; an empty list means the pair is good.
/// </summary>
internal static partial class AdmxTemplateChecker
{
    public static readonly XNamespace Pd = "http://schemas.microsoft.com/GroupPolicy/2006/07/PolicyDefinitions";

    // Which presentation control may show which policy element (from the schema's documentation).
    private static readonly Dictionary<string, string[]> ControlsFor = new()
    {
        ["list"] = ["listBox"],
        ["text"] = ["textBox", "comboBox", "decimalTextBox"],
        ["decimal"] = ["decimalTextBox"],
        ["enum"] = ["dropdownList"],
        ["boolean"] = ["checkBox"],
        ["multiText"] = ["multiTextBox"],
    };

    private static readonly Lazy<XmlSchemaSet> Schemas = new(LoadSchemas);

    public static List<string> ValidateAgainstSchema(string xml, string name)
    {
        var problems = new List<string>();
        var settings = new XmlReaderSettings
        {
            ValidationType = ValidationType.Schema,
            Schemas = Schemas.Value,
            ValidationFlags = XmlSchemaValidationFlags.ReportValidationWarnings | XmlSchemaValidationFlags.ProcessIdentityConstraints,
            DtdProcessing = DtdProcessing.Prohibit,
        };
        settings.ValidationEventHandler += (_, e) =>
            problems.Add($"{name}:{e.Exception?.LineNumber}:{e.Exception?.LinePosition}: {e.Severity}: {e.Message}");
        try
        {
            using var reader = XmlReader.Create(new StringReader(xml), settings);
            while (reader.Read())
            {
            }
        }
        catch (XmlException e)
        {
            problems.Add($"{name}:{e.LineNumber}:{e.LinePosition}: not well-formed: {e.Message}");
        }
        return problems;
    }

    public static List<string> CheckReferences(XDocument admx, XDocument adml)
    {
        var problems = new List<string>();
        var strings = Ids(adml.Descendants(Pd + "stringTable").Elements(Pd + "string"), "string", problems);
        var presentations = Ids(adml.Descendants(Pd + "presentationTable").Elements(Pd + "presentation"), "presentation", problems);

        var stringRefs = References(admx, StringReference());
        var presentationRefs = References(admx, PresentationReference());
        problems.AddRange(stringRefs.Where(r => !strings.ContainsKey(r)).Select(r => $"the ADMX references $(string.{r}) but the ADML has no string '{r}'"));
        problems.AddRange(presentationRefs.Where(r => !presentations.ContainsKey(r)).Select(r => $"the ADMX references $(presentation.{r}) but the ADML has no presentation '{r}'"));
        problems.AddRange(strings.Keys.Where(s => !stringRefs.Contains(s)).Select(s => $"the ADML string '{s}' is not referenced by the ADMX"));
        problems.AddRange(presentations.Keys.Where(p => !presentationRefs.Contains(p)).Select(p => $"the ADML presentation '{p}' is not referenced by the ADMX"));

        CheckDefinitions(admx, problems);
        foreach (var policy in admx.Descendants(Pd + "policy"))
        {
            CheckPolicyPresentation(policy, presentations, problems);
        }
        return problems;
    }

    private static void CheckDefinitions(XDocument admx, List<string> problems)
    {
        var categories = Ids(admx.Descendants(Pd + "category"), "category", problems, "name");
        var supported = Ids(admx.Descendants(Pd + "definition"), "supportedOn definition", problems, "name");
        Ids(admx.Descendants(Pd + "policy"), "policy", problems, "name");
        foreach (var parent in admx.Descendants(Pd + "parentCategory"))
        {
            string target = (string)parent.Attribute("ref")!;
            if (!target.Contains(':', StringComparison.Ordinal) && !categories.ContainsKey(target))
            {
                problems.Add($"parentCategory '{target}' is not a category of this ADMX");
            }
        }
        foreach (var policy in admx.Descendants(Pd + "policy"))
        {
            string target = (string?)policy.Element(Pd + "supportedOn")?.Attribute("ref") ?? "";
            if (!target.Contains(':', StringComparison.Ordinal) && !supported.ContainsKey(target))
            {
                problems.Add($"policy '{(string?)policy.Attribute("name")}' is supported on '{target}', which is not defined");
            }
            if (policy.Attribute("explainText") is null)
            {
                problems.Add($"policy '{(string?)policy.Attribute("name")}' has no explainText");
            }
        }
    }

    private static void CheckPolicyPresentation(XElement policy, Dictionary<string, XElement> presentations, List<string> problems)
    {
        string policyName = (string?)policy.Attribute("name") ?? "?";
        var elements = new Dictionary<string, XElement>(StringComparer.Ordinal);
        foreach (var element in policy.Element(Pd + "elements")?.Elements() ?? [])
        {
            string id = (string?)element.Attribute("id") ?? "";
            if (!elements.TryAdd(id, element))
            {
                problems.Add($"policy '{policyName}': element id '{id}' is used twice");
            }
        }
        string? reference = (string?)policy.Attribute("presentation");
        if (reference is null)
        {
            if (elements.Count > 0)
            {
                problems.Add($"policy '{policyName}' has elements but no presentation");
            }
            return;
        }
        var match = PresentationReference().Match(reference);
        if (!match.Success || !presentations.TryGetValue(match.Groups[1].Value, out var presentation))
        {
            return; // already reported as a missing presentation
        }
        var presented = new HashSet<string>(StringComparer.Ordinal);
        foreach (var control in presentation.Elements().Where(c => c.Attribute("refId") is not null))
        {
            string refId = (string)control.Attribute("refId")!;
            string kind = control.Name.LocalName;
            if (!elements.TryGetValue(refId, out var element))
            {
                problems.Add($"presentation '{presentation.Attribute("id")?.Value}': {kind} refers to '{refId}', which is not an element of policy '{policyName}'");
                continue;
            }
            if (!presented.Add(refId))
            {
                problems.Add($"presentation '{presentation.Attribute("id")?.Value}': element '{refId}' is shown twice");
            }
            if (!ControlsFor.TryGetValue(element.Name.LocalName, out var allowed) || !allowed.Contains(kind))
            {
                problems.Add($"presentation '{presentation.Attribute("id")?.Value}': a {kind} cannot show the {element.Name.LocalName} element '{refId}'");
            }
        }
        foreach (string id in elements.Keys.Where(id => !presented.Contains(id)))
        {
            problems.Add($"policy '{policyName}': element '{id}' has no control in presentation '{presentation.Attribute("id")?.Value}'");
        }
    }

    private static Dictionary<string, XElement> Ids(IEnumerable<XElement> items, string what, List<string> problems, string attribute = "id")
    {
        var ids = new Dictionary<string, XElement>(StringComparer.Ordinal);
        foreach (var item in items)
        {
            string id = (string?)item.Attribute(attribute) ?? "";
            if (!ids.TryAdd(id, item))
            {
                problems.Add($"{what} '{id}' is defined twice");
            }
        }
        return ids;
    }

    // References may sit in any attribute (displayName, explainText, presentation, item displayName...).
    private static HashSet<string> References(XDocument admx, Regex pattern) =>
        admx.Descendants().Attributes()
            .Select(a => pattern.Match(a.Value))
            .Where(m => m.Success)
            .Select(m => m.Groups[1].Value)
            .ToHashSet(StringComparer.Ordinal);

    private static XmlSchemaSet LoadSchemas()
    {
        string dir = RepoPaths.AdmxSchemas;
        var set = new XmlSchemaSet { XmlResolver = new XmlUrlResolver() };
        var errors = new List<string>();
        set.ValidationEventHandler += (_, e) => errors.Add(e.Message);
        // PolicyDefinitionFiles.xsd is the entry point; it includes the other two.
        set.Add(null, Path.Combine(dir, "PolicyDefinitionFiles.xsd"));
        set.Compile();
        if (errors.Count > 0)
        {
            throw new InvalidOperationException("the ADMX schema does not compile: " + string.Join("; ", errors));
        }
        return set;
    }

    [GeneratedRegex(@"^\$\(string\.([^)]+)\)$")]
    private static partial Regex StringReference();

    [GeneratedRegex(@"^\$\(presentation\.([^)]+)\)$")]
    private static partial Regex PresentationReference();
}
