EB.overlay();
