using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.AdminUi.Figures;

namespace SieveQ.AdminUi.Tests;

public sealed class RuleSetsPageTests : ConsoleTestContext
{
    [Fact]
    public async Task The_rule_sets_page_shows_each_replicas_version_the_agreed_one_and_offers_no_change()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<RuleSets>(p => p.AddCascadingValue(SignedIn("admin", Access.ConsoleRole.Administrator)));
        Assert.Equal("Running version 3 (agreed by 2 replicas, f+1 = 2 needed)", page.Find("[data-testid=agreed-version]").TextContent.Trim());
        var rows = page.FindAll("[data-testid=replica-rule-sets] tbody tr");
        Assert.Equal(2, rows.Count);
        Assert.Equal("replica-sq-0 3 2 - 2 -", string.Join(' ', rows[0].QuerySelectorAll("td").Select(td => td.TextContent.Trim())));
        // Read-only even for an administrator: the console cannot activate a rule set.
        Assert.Empty(page.FindAll("button, input, form"));
        Assert.Contains("sieveq rules push", page.Find("[data-testid=rule-sets-read-only]").TextContent, StringComparison.Ordinal);
        Assert.NotNull(page.Find("[data-testid=fixed-routes]"));
    }
}
