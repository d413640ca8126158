// A fake .env and other files holding one secret of every kind secretRedactor knows (none is a real credential).
export const FAKE_SECRETS = {
  openai: `sk-proj-${'Tq3vWx8YzA1bC4dE7fG0hJ2kL5mN'.repeat(2)}`,
  anthropic: `sk-ant-api03-${'Rk9pLm2Nq7Xs4Vb1Zc8Dw5Fe3Gh6'.repeat(2)}-AA`,
  awsAccessKeyId: 'AKIAQ7EXAMPLE4FAKE2Z',
  awsSecretAccessKey: 'wJalrXUtnFEMIK7MDENGbPxRfiCYFAKEKEY12345',
  github: `ghp_${'aB3dE6gH9jK2mN5pQ8sT1vW4yZ7'.slice(0, 18)}${'Cx0Fy3Iz6Lb9Oe2'.padEnd(18, 'q')}`,
  gitlab: 'glpat-Xy7Wv3Ut9Sr5Qp1On4Mk',
  slack: 'xoxb-2048156739-4096281735-Qm8Rn3Sp7Tq2Ur6Vs1Wt5Xu',
  stripe: 'sk_live_4eC39HqLyjWDarjtT1zdp7dcFAKE',
  google: 'AIzaSyD4fAkE-8kLmNoPqRsTuVwXyZ012345678',
  jwt: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJmYWtlLXVzZXIiLCJpYXQiOjE3MDAwMDAwMDB9.c2lnbmF0dXJlLWZha2UtdmFsdWU',
  bearer: 'tok3nF4keB3arerValue9876543210',
  dbPassword: 'Pg-Passw0rd-Fake-7731',
  envPassword: 'hunter2-but-longer-8812',
  envSecret: 'session-secret-value-5521',
  envToken: 'plain-token-value-4410',
  privateKeyBody: 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7FAKEKEYBODY',
} as const;

/** What `cat .env` prints: every built-in kind in one file. */
export const FAKE_ENV_FILE = [
  `OPENAI_API_KEY=${FAKE_SECRETS.openai}`,
  `ANTHROPIC_API_KEY=${FAKE_SECRETS.anthropic}`,
  `AWS_ACCESS_KEY_ID=${FAKE_SECRETS.awsAccessKeyId}`,
  `AWS_SECRET_ACCESS_KEY=${FAKE_SECRETS.awsSecretAccessKey}`,
  `GITHUB_TOKEN=${FAKE_SECRETS.github}`,
  `GITLAB_TOKEN=${FAKE_SECRETS.gitlab}`,
  `SLACK_BOT_TOKEN=${FAKE_SECRETS.slack}`,
  `STRIPE_SECRET_KEY=${FAKE_SECRETS.stripe}`,
  `GOOGLE_API_KEY=${FAKE_SECRETS.google}`,
  `AUTH_JWT=${FAKE_SECRETS.jwt}`,
  `DATABASE_URL=postgres://app:${FAKE_SECRETS.dbPassword}@db.internal:5432/app`,
  `ADMIN_PASSWORD=${FAKE_SECRETS.envPassword}`,
  `export SESSION_SECRET="${FAKE_SECRETS.envSecret}"`,
  `apiToken: not-a-line-this-rule-takes`,
  `WEBHOOK_TOKEN=${FAKE_SECRETS.envToken}`,
  'DEBUG=true',
  'PORT=8080',
  '',
].join('\n');

export const FAKE_KEY_FILE = `-----BEGIN RSA PRIVATE KEY-----\n${FAKE_SECRETS.privateKeyBody}\nAbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/==\n-----END RSA PRIVATE KEY-----\n`;

export const FAKE_CURL = `curl -H "Authorization: Bearer ${FAKE_SECRETS.bearer}" https://api.example.test/v1/me`;

/** The secret values (what must appear nowhere once redacted). */
export const secretValues = (): string[] => Object.values(FAKE_SECRETS);
