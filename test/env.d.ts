declare module "cloudflare:test" {
  interface ProvidedEnv extends Env {
    TEST_MIGRATIONS: D1Migration[];
  }
}
declare module "*.yml?raw" {
  const text: string;
  export default text;
}
