/** An app's SAML provider and its application, and the certificate the provider signs with. */
import { IdpError, type SamlApp, type SamlChanges } from '../../idp-types.ts';
import { ensureWithApplication, undoApplication } from './applications.ts';
import { type AuthentikClient, authentikApi, type Json, json, PAGE_SIZE, text } from './client.ts';

const SAML_MAPPING = 'goauthentik.io/providers/saml';
const SAML_NAME_ID = `${SAML_MAPPING}/username`;
const SAML_ATTRIBUTES = ['username', 'email', 'name', 'groups', 'uid'].map((name) => `${SAML_MAPPING}/${name}`);

export async function findSamlProvider(client: AuthentikClient, name: string): Promise<Json | undefined> {
    const found = await client.all((page) => client.providers.providersSamlListRaw({ name, page, pageSize: PAGE_SIZE }));
    return found.find((provider) => provider.name === name);
}

async function samlMappings(client: AuthentikClient): Promise<{ nameId: string; attributes: string[] }> {
    const managed = await client.all((page) =>
        client.mappings.propertymappingsProviderSamlListRaw({ managed: [SAML_NAME_ID, ...SAML_ATTRIBUTES], page, pageSize: PAGE_SIZE }),
    );
    const pkOf = (name: string) => managed.find((mapping) => mapping.managed === name)?.pk;
    const nameId = pkOf(SAML_NAME_ID);
    if (nameId === undefined) {
        throw new IdpError('not-found', `authentik has no SAML mapping ${SAML_NAME_ID}: its system blueprints have not run`);
    }

    const attributes = SAML_ATTRIBUTES.map(pkOf).filter((pk) => pk !== undefined);
    return { nameId: text(nameId), attributes: attributes.map(text) };
}

/** The fields ensureSamlProvider sets, as the provider had them, in the client's request shape. */
function previousSamlFields(provider: Json): Record<string, unknown> {
    return {
        authorizationFlow: text(provider.authorization_flow),
        invalidationFlow: text(provider.invalidation_flow),
        acsUrl: text(provider.acs_url),
        audience: text(provider.audience),
        signingKp: provider.signing_kp ?? null,
        signAssertion: provider.sign_assertion,
        signResponse: provider.sign_response,
        nameIdMapping: provider.name_id_mapping ?? null,
        propertyMappings: provider.property_mappings,
        spBinding: provider.sp_binding,
    };
}

export async function ensureSamlProvider(
    client: AuthentikClient,
    app: SamlApp,
    changes: SamlChanges,
    recorded: () => Promise<void>,
): Promise<void> {
    await client.call(`setting up ${app.objectName}`, async () => {
        const mappings = await samlMappings(client);
        const fields = {
            authorizationFlow: app.authorizationFlow,
            invalidationFlow: app.invalidationFlow,
            acsUrl: app.acsUrl,
            audience: app.audience,
            signingKp: app.signingKey,
            signAssertion: true,
            signResponse: true,
            nameIdMapping: mappings.nameId,
            propertyMappings: mappings.attributes,
            // Service providers such as mod_auth_mellon take the answer only by POST at their ACS.
            spBinding: authentikApi().SAMLBindingsEnum.Post,
        };
        await ensureWithApplication(client, app, changes, await findSamlProvider(client, app.objectName), {
            create: () => json(client.providers.providersSamlCreateRaw({ sAMLProviderRequest: { name: app.objectName, ...fields } })),
            update: (id) => client.providers.providersSamlPartialUpdateRaw({ id, patchedSAMLProviderRequest: fields }),
            previous: previousSamlFields,
            recorded,
        });
    });
}

export async function undoSamlProvider(client: AuthentikClient, app: SamlApp, changes: SamlChanges): Promise<void> {
    await client.call(`undoing the changes to ${app.objectName}`, async () => {
        await undoApplication(client, app.objectName, changes);
        if (changes.providerId === null) {
            return;
        }

        if (changes.providerCreated) {
            await client.providers.providersSamlDestroyRaw({ id: changes.providerId });
        } else if (changes.previousProvider) {
            await client.providers.providersSamlPartialUpdateRaw({
                id: changes.providerId,
                patchedSAMLProviderRequest: changes.previousProvider,
            });
        }
    });
}

/** The PEM certificate the SAML provider `objectName` signs with; null when it has none or does not exist. */
export async function samlCertificate(client: AuthentikClient, objectName: string): Promise<string | null> {
    return await client.call(`reading the certificate of ${objectName}`, async () => {
        const provider = await findSamlProvider(client, objectName);
        const keypair = provider?.signing_kp;
        if (keypair === null || keypair === undefined) {
            return null;
        }

        const view = await json<{ data: string }>(
            client.crypto.cryptoCertificatekeypairsViewCertificateRetrieveRaw({ kpUuid: text(keypair) }),
        );
        return view.data;
    });
}
