/** Sets these variables in process.env (as Lambda's environment would); the function returned puts back what was there. */
export function setEnvironment(values: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}
