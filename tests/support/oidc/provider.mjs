// A real OpenID Connect provider for the sign-in tests: the npm package oidc-provider (OpenID
// certified), on loopback, with one confidential client and a static account store.
//
//   node provider.mjs <settings.json>
//
// settings.json: {"port", "client_id", "secret", "redirect_uris": [...], "accounts": {"<id>":
// {"email", "name"}}}. It prints "ready <issuer>" once it listens.
//
// Nobody types a password here: the login and consent steps finish by themselves, as the
// account the test chose last (POST /test/next with {"account": id}, or {"error": code} for an
// IdP that refuses). The browser still walks every redirect of the real protocol.
import { readFileSync } from "node:fs";
import Provider from "oidc-provider";

const settings = JSON.parse(readFileSync(process.argv[2], "utf8"));
const issuer = `http://127.0.0.1:${settings.port}`;
let next = { account: Object.keys(settings.accounts)[0] };

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: settings.client_id,
      client_secret: settings.secret,
      redirect_uris: settings.redirect_uris,
      response_types: ["code"],
      grant_types: ["authorization_code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  async findAccount(ctx, id) {
    const account = settings.accounts[id];
    if (!account) return undefined;
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: account.email, email_verified: true, name: account.name };
      },
    };
  },
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
  features: { devInteractions: { enabled: false } },
  pkce: { required: () => true },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  cookies: { keys: ["test cookie key, not a secret"] },
  // Loopback over plain HTTP: the tests have no certificates.
  clientBasedCORS: () => true,
});
provider.proxy = false;

provider.use(async (ctx, nextMiddleware) => {
  if (ctx.path === "/test/next" && ctx.method === "POST") {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    next = JSON.parse(Buffer.concat(chunks).toString() || "{}");
    ctx.body = { ok: true };
    return;
  }
  if (ctx.path.startsWith("/interaction/")) {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    let result;
    if (next.error) {
      result = { error: next.error, error_description: "refused by the test" };
    } else if (details.prompt.name === "login") {
      result = { login: { accountId: next.account } };
    } else {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
      grant.addOIDCScope("openid email profile");
      result = { consent: { grantId: await grant.save() } };
    }
    const target = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
    ctx.redirect(target);
    return;
  }
  await nextMiddleware();
});

provider.listen(settings.port, "127.0.0.1", () => {
  console.log(`ready ${issuer}`);
});
