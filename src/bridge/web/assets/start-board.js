EB.board();
