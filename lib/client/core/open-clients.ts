/**
 * The clients of the process that are not closed, in creation order: CSDS reports every one
 * (gRFC A40, A71). A client adds itself when made and removes itself when closed.
 */
export class OpenClients<C> {
  private readonly open = new Set<C>();

  opened(client: C): void {
    this.open.add(client);
  }

  closed(client: C): void {
    this.open.delete(client);
  }

  list(): readonly C[] {
    return [...this.open];
  }
}
